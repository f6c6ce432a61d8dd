//! Running the server under test on some of the machine's cores and the load driver on the
//! others, as the reference reports do (a 1-core ACE container, the driver on another host).
//!
//! A process starts with its parent's CPU mask, and a thread with its creator's: pinning the
//! harness's calling thread before it starts the server, and again before it starts the
//! driver's threads, places each without touching the server's code.

use crate::error::BenchError;

/// The CPUs the calling thread may run on, in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>, BenchError> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the pointer and size describe `set`.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(BenchError::io(
            "reading the CPU affinity",
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: CPU_ISSET only reads `set`, for indexes below CPU_SETSIZE.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Restrict the calling thread, and the processes and threads it starts from now on, to `cpus`.
pub fn pin_to(cpus: &[usize]) -> Result<(), BenchError> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET writes inside `set` for indexes below CPU_SETSIZE, checked here.
        if c < libc::CPU_SETSIZE as usize {
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    // SAFETY: pid 0 is the calling thread; the pointer and size describe `set`.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(BenchError::io(
            format!("pinning to CPUs {cpus:?}"),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// Where the server and the driver run, and every CPU the harness had before placing them.
pub struct Placement {
    pub all: Vec<usize>,
    pub server: Vec<usize>,
    pub driver: Vec<usize>,
}

impl Placement {
    /// The first `server_cores` usable CPUs for the server, the rest for the driver.
    pub fn new(server_cores: usize) -> Result<Placement, BenchError> {
        let all = allowed_cpus()?;
        let (server, driver) = split(&all, server_cores)?;
        Ok(Placement {
            all,
            server,
            driver,
        })
    }
}

/// The first `server_cores` of `allowed` for the server, the rest for the driver.
pub fn split(
    allowed: &[usize],
    server_cores: usize,
) -> Result<(Vec<usize>, Vec<usize>), BenchError> {
    if server_cores == 0 || server_cores >= allowed.len() {
        return Err(BenchError::Unsupported(format!(
            "server_cores: {server_cores} leaves no core for the server or the driver ({} usable)",
            allowed.len()
        )));
    }
    let (s, d) = allowed.split_at(server_cores);
    Ok((s.to_vec(), d.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_gives_the_server_the_first_cores_and_the_driver_the_rest() {
        assert_eq!(
            split(&[0, 1, 2, 3], 1).expect("split"),
            (vec![0], vec![1, 2, 3])
        );
        assert_eq!(split(&[2, 5], 1).expect("split"), (vec![2], vec![5]));
    }

    #[test]
    fn split_refuses_when_a_side_would_have_no_core() {
        assert!(split(&[0, 1], 2).is_err());
        assert!(split(&[0, 1], 0).is_err());
        assert!(split(&[0], 1).is_err());
    }

    #[test]
    fn pinning_a_thread_is_seen_by_the_threads_it_starts() {
        let allowed = allowed_cpus().expect("affinity");
        let first = allowed[0];
        let seen = std::thread::spawn(move || {
            pin_to(&[first]).expect("pin");
            std::thread::spawn(allowed_cpus)
                .join()
                .expect("child thread")
                .expect("affinity")
        })
        .join()
        .expect("thread");
        assert_eq!(seen, vec![first]);
    }
}
