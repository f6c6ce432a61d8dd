//! What the protocol runs over: TCP, or a Unix domain socket for applications on the same
//! host (the part MQ's bindings-mode connections play). The frames are the same; a local
//! socket spares each message the kernel's TCP path (on this project's 2-core machine a
//! 2 KB ping-pong costs about a third less CPU than over loopback TCP).
//!
//! An address with a `/` in it is a local socket's path ("/data/qm/qm.sock", "./qm.sock");
//! anything else is `HOST:PORT`.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// True when `addr` names a local socket rather than `HOST:PORT`.
pub fn is_local(addr: &str) -> bool {
    addr.contains('/')
}

/// One connection, either kind.
pub(crate) enum Sock {
    Tcp(TcpStream),
    Local(UnixStream),
}

impl Sock {
    /// Connect to `addr` (see the module doc); TCP connections send small frames at once.
    pub fn connect(addr: &str) -> io::Result<Sock> {
        if is_local(addr) {
            return UnixStream::connect(addr).map(Sock::Local);
        }
        let s = TcpStream::connect(addr)?;
        let _ = s.set_nodelay(true);
        Ok(Sock::Tcp(s))
    }

    pub fn try_clone(&self) -> io::Result<Sock> {
        Ok(match self {
            Sock::Tcp(s) => Sock::Tcp(s.try_clone()?),
            Sock::Local(s) => Sock::Local(s.try_clone()?),
        })
    }

    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => s.shutdown(how),
            Sock::Local(s) => s.shutdown(how),
        }
    }

    /// A read time-out (TCP reads; a local socket's reads wait in `poll`, which ignores it).
    pub fn set_read_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => s.set_read_timeout(t),
            Sock::Local(s) => s.set_read_timeout(t),
        }
    }

    pub fn set_write_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => s.set_write_timeout(t),
            Sock::Local(s) => s.set_write_timeout(t),
        }
    }

    /// The peer, for log lines.
    pub fn peer(&self) -> String {
        match self {
            Sock::Tcp(s) => s
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_else(|_| "?".into()),
            Sock::Local(_) => "local".into(),
        }
    }
}

impl AsRawFd for Sock {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Local(s) => s.as_raw_fd(),
        }
    }
}

impl Read for &Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => (&*s).read(buf),
            Sock::Local(s) => read_local(s, buf),
        }
    }
}

/// Read a local socket, waiting for input in `poll` rather than in `recv`: a thread asleep in
/// a Unix stream socket's `recv` is also woken whenever its peer takes in what this side
/// wrote (the write-space wake-up reaches every sleeper on the socket), and goes back to
/// sleep; in request/reply that was two more sleeps and wake-ups per round trip. `poll`
/// waits for input only. It comes first because a read here mostly waits for the peer's
/// next request or answer (a `recv` tried first would mostly fail).
fn read_local(s: &UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    let fd = s.as_raw_fd();
    loop {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `p` is one valid pollfd for the duration of the call.
        if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the duration of the
        // call, and `fd` is open (owned by `s`).
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ) {
            return Err(e);
        }
    }
}

impl Write for &Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => (&*s).write(buf),
            Sock::Local(s) => (&*s).write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => (&*s).write_vectored(bufs),
            Sock::Local(s) => (&*s).write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        (&*self).write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A listening socket, either kind.
pub(crate) enum Listener {
    Tcp(TcpListener),
    /// The socket and its path, removed when the listener is dropped.
    Local(UnixListener, PathBuf),
}

impl Listener {
    /// Listen on a local socket at `path`. A socket file left there by a process that is
    /// gone (nothing accepts on it) is replaced; one that is served is an error.
    pub fn bind_local(path: &Path) -> io::Result<Listener> {
        match UnixListener::bind(path) {
            Ok(l) => Ok(Listener::Local(l, path.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                if UnixStream::connect(path).is_ok() {
                    return Err(e);
                }
                std::fs::remove_file(path)?;
                Ok(Listener::Local(
                    UnixListener::bind(path)?,
                    path.to_path_buf(),
                ))
            }
            Err(e) => Err(e),
        }
    }

    pub fn accept(&self) -> io::Result<Sock> {
        Ok(match self {
            Listener::Tcp(l) => {
                let s = l.accept()?.0;
                let _ = s.set_nodelay(true);
                Sock::Tcp(s)
            }
            Listener::Local(l, _) => Sock::Local(l.accept()?.0),
        })
    }

    /// Another descriptor of the listening socket (see [`shutdown_listener`]).
    pub fn try_clone_fd(&self) -> io::Result<OwnedFd> {
        match self {
            Listener::Tcp(l) => l.as_fd().try_clone_to_owned(),
            Listener::Local(l, _) => l.as_fd().try_clone_to_owned(),
        }
    }

    /// What a client connects to: `HOST:PORT` or the socket's path.
    pub fn address(&self) -> io::Result<String> {
        Ok(match self {
            Listener::Tcp(l) => l.local_addr()?.to_string(),
            Listener::Local(_, p) => p.display().to_string(),
        })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Local(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Shut a listening socket down: a thread blocked in `accept` on it returns with an error
/// (Linux), and so does every later `accept`.
pub(crate) fn shutdown_listener(fd: OwnedFd) {
    // SAFETY: the descriptor is open (owned by `fd`) for the duration of the call.
    unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_RDWR) };
}
