//! The server: loads a project, deploys its flows, serves HTTP for HTTPInput nodes and the admin
//! API, redeploys changed flow files, and drains on SIGTERM.

pub mod admin;
pub mod archive;
pub mod control;
pub mod deploy;
mod error;
pub mod http;
pub mod indoubt;
pub mod project;
pub mod queue_admin;
pub mod queues;
pub mod rest_api;
pub mod settings;
pub mod ui;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioExecutor, TokioIo};
use sluice_flow::Registry;
use sluice_node_api::Services;
use sluice_node_api::http_listener::HttpRouter;
use tokio::net::TcpListener;

use crate::admin::{AdminRoutes, AdminState};
use crate::deploy::Deployment;
use crate::http::HttpState;
pub use error::ServerError;

/// How `sluice run` was asked to run.
pub struct RunOptions {
    pub dir: PathBuf,
    pub http_port: u16,
    pub admin_port: u16,
    pub qm_port: u16,
    /// The port of TCP/IP server nodes that name none of their own.
    pub tcpip_port: u16,
    pub data_dir: Option<PathBuf>,
    /// The address of flow listeners (HTTP, TCP/IP).
    pub bind: std::net::IpAddr,
    /// The address of the admin API and the queue manager's client port.
    pub admin_bind: std::net::IpAddr,
    /// How often flow files are checked for changes.
    pub watch_every: Duration,
}

/// Load a project and build every flow without running anything (`sluice validate`): the same
/// checks `run` makes before it deploys. Returns the number of flows.
pub fn validate(
    dir: &std::path::Path,
    registry: Registry,
) -> Result<usize, Vec<sluice_flow::Diagnostic>> {
    validate_with(dir, &registry)
}

/// [`validate`] with a registry the caller keeps (the admin API's deploy).
pub fn validate_with(
    dir: &std::path::Path,
    registry: &Registry,
) -> Result<usize, Vec<sluice_flow::Diagnostic>> {
    let project = project::load(dir, registry)?;
    // Not a problem of one file: reported at the project folder.
    let internal = |e: &dyn std::error::Error| {
        vec![sluice_flow::Diagnostic::whole(
            &dir.display().to_string(),
            e.to_string(),
        )]
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| internal(&e))?;
    let qm = queues::open_in_memory(&project.settings).map_err(|e| internal(&e))?;
    let services = Services {
        http: Arc::new(HttpRouter::new()),
        runtime: Some(rt.handle().clone()),
        queues: Some(qm),
        data_dir: None,
        tcpip: None,
        datasources: project.datasources(),
        brokers: project.brokers(),
        cache: Arc::new(sluice_cache::GlobalCache::in_memory()),
    };
    let mut problems = Vec::new();
    for def in &project.flows {
        if let Err(mut p) = sluice_flow::Flow::build(def, dir, &services) {
            problems.append(&mut p);
        }
    }
    if problems.is_empty() {
        Ok(project.flows.len())
    } else {
        Err(problems)
    }
}

fn report(problems: &[sluice_flow::Diagnostic]) {
    for p in problems {
        eprint!("{p}");
    }
    eprintln!(
        "error: the project has {}; nothing was deployed",
        sluice_flow::diag::counted(problems.len(), "problem")
    );
}

/// Exit codes: 0 after a clean stop, 1 when the server could not start, 2 for a project with errors.
pub fn run(opts: RunOptions, registry: Registry) -> i32 {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("sluice-io")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the I/O runtime: {e}");
            return 1;
        }
    };
    let registry = Arc::new(registry);
    let project = match project::load(&opts.dir, &registry) {
        Ok(p) => p,
        Err(problems) => {
            report(&problems);
            return 2;
        }
    };
    if let Err(e) = check_exposure(&opts, &project.settings) {
        eprintln!("error: {e}");
        return 2;
    }
    let data_dir = opts
        .data_dir
        .clone()
        .unwrap_or_else(|| opts.dir.join(".sluice-data"));
    let qm = match queues::open(&data_dir, &project.settings) {
        Ok(qm) => qm,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let qm_addr = SocketAddr::new(opts.admin_bind, opts.qm_port);
    let qm_server = match queues::serve_tcp(qm_addr, &opts.dir, &project.settings, &qm) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            qm.shutdown();
            return 1;
        }
    };
    // Applications on this host may use the local socket instead: the same protocol
    // without the kernel's TCP path (MQ's bindings-mode connections play that part).
    let qm_socket = data_dir.join("qm.sock");
    let qm_local = sluice_qm::net::Server::bind(
        &qm_socket.display().to_string(),
        Arc::clone(&qm),
        queues::auth(&project.settings),
    )
    .map_err(|e| {
        tracing::warn!(
            "queue manager: no local socket at {}: {e}",
            qm_socket.display()
        )
    })
    .ok();
    let admin_in_flight = Arc::new(AtomicUsize::new(0));
    let code = serve(
        &rt,
        &opts,
        &data_dir,
        &project,
        registry,
        &qm,
        &admin_in_flight,
    );
    drop(qm_local);
    drop(qm_server);
    qm.shutdown();
    // A REST get still waiting for a message answers 2162 (stopping) at its next try, within
    // 50 ms of the shutdown: it gets that long to be sent before the runtime ends.
    rt.block_on(async {
        let since = Instant::now();
        while admin_in_flight.load(Ordering::Acquire) > 0
            && since.elapsed() < Duration::from_secs(1)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    rt.shutdown_timeout(Duration::from_secs(5));
    if code == 0 {
        tracing::info!("Sluice stopped.");
    }
    code
}

/// The admin API and the queue manager give full control of the server: beyond loopback they
/// need credentials, as RabbitMQ's guest user and Redis's protected mode do.
fn check_exposure(opts: &RunOptions, settings: &settings::Settings) -> Result<(), String> {
    if opts.admin_bind.is_loopback() || !settings.queue_manager.allow_anonymous {
        return Ok(());
    }
    Err(format!(
        "--admin-bind {} would open the admin API (port {}) and the queue manager (port {}) to \
         other hosts without credentials. Either keep them on loopback (the default, \
         --admin-bind 127.0.0.1) or require credentials in sluice.yaml:\n  queue_manager:\n    \
         allow_anonymous: false\n    users: {{ admin: a-long-password }}   # or tokens: [ ... ]",
        opts.admin_bind, opts.admin_port, opts.qm_port
    ))
}

/// Deploy the flows and serve until a signal; the queue manager is already open.
fn serve(
    rt: &tokio::runtime::Runtime,
    opts: &RunOptions,
    data_dir: &std::path::Path,
    project: &project::Project,
    registry: Arc<Registry>,
    qm: &Arc<sluice_qm::QueueManager>,
    admin_in_flight: &Arc<AtomicUsize>,
) -> i32 {
    let cache =
        match sluice_cache::GlobalCache::open(Some(data_dir), project.settings.cache.clone()) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                eprintln!("error: {e}");
                return 1;
            }
        };
    let flusher = sluice_cache::Flusher::start(&cache, Duration::from_secs(1));
    // Uptime counts from here: the queue manager's recovery before is part of starting.
    let started = Instant::now();
    // Before any flow starts: no transaction a crash left prepared may stay in doubt.
    let in_doubt = indoubt::recover(qm, &project.datasources());
    let router = Arc::new(HttpRouter::new());
    let services = Arc::new(Services {
        http: Arc::clone(&router),
        runtime: Some(rt.handle().clone()),
        queues: Some(Arc::clone(qm)),
        data_dir: Some(data_dir.to_path_buf()),
        tcpip: Some(SocketAddr::new(opts.bind, opts.tcpip_port)),
        datasources: project.datasources(),
        brokers: project.brokers(),
        cache,
    });
    let deployment = Arc::new(Deployment::new(&opts.dir, Arc::clone(&registry), services));
    if let Err(problems) = deployment.deploy_all(&project.flows) {
        report(&problems);
        return 2;
    }
    let tls = match &project.settings.http.tls {
        None => None,
        Some(t) => {
            match http::tls_acceptor(&opts.dir.join(&t.cert_file), &opts.dir.join(&t.key_file)) {
                Ok(a) => Some(a),
                Err(e) => {
                    eprintln!("error: TLS: {e}");
                    deployment.stop_all();
                    return 2;
                }
            }
        }
    };
    let code = rt.block_on(async {
        // Before anything can tell a client the server is up: a SIGTERM that came between
        // "ready" and the handler's installation ended the process without draining.
        let signals = Signals::install();
        let http_addr = SocketAddr::new(opts.bind, opts.http_port);
        let admin_addr = SocketAddr::new(opts.admin_bind, opts.admin_port);
        let (http_l, admin_l) = match (
            TcpListener::bind(http_addr).await,
            TcpListener::bind(admin_addr).await,
        ) {
            (Ok(h), Ok(a)) => (h, a),
            (Err(source), _) => {
                let e = ServerError::Listen {
                    what: "HTTP",
                    option: "--http-port",
                    addr: http_addr,
                    source,
                };
                eprintln!("error: {e}");
                return 1;
            }
            (_, Err(source)) => {
                let e = ServerError::Listen {
                    what: "admin",
                    option: "--admin-port",
                    addr: admin_addr,
                    source,
                };
                eprintln!("error: {e}");
                return 1;
            }
        };
        router.set_base_url(listener_url(&http_l, opts.bind, tls.is_some()));
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let http_state = Arc::new(HttpState {
            router,
            settings: project.settings.http.clone(),
            stopped: deployment.stopped_paths(),
        });
        let http_task = tokio::spawn(http::serve(http_l, http_state, tls, stop_rx.clone()));
        let admin_state = Arc::new(AdminState {
            deployment: Arc::clone(&deployment),
            registry: Arc::clone(&registry),
            extensions: vec![Arc::new(queues::RestMessaging {
                qm: Arc::clone(qm),
                auth: queues::auth(&project.settings),
            }) as Arc<dyn AdminRoutes>],
            auth: queues::auth(&project.settings),
            admin: project.settings.admin.clone(),
            in_flight: Arc::clone(admin_in_flight),
            qm: Arc::clone(qm),
            started,
            in_doubt,
        });
        let admin_task = tokio::spawn(serve_admin(admin_l, admin_state, stop_rx));
        let watch_stop = Arc::new(AtomicBool::new(false));
        let watcher = deployment.watch(opts.watch_every, Arc::clone(&watch_stop));
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "ready");
            let _ = out.flush();
        }
        tracing::info!(
            http = %http_addr,
            admin = %admin_addr,
            qm = %SocketAddr::new(opts.admin_bind, opts.qm_port),
            tcpip = %SocketAddr::new(opts.bind, opts.tcpip_port),
            "Sluice is ready."
        );
        signals.wait().await;
        tracing::info!("Stopping: finishing the messages in progress.");
        let _ = stop_tx.send(true);
        let _ = http_task.await;
        let _ = admin_task.await;
        watch_stop.store(true, Ordering::Release);
        watcher.thread().unpark();
        let _ = tokio::task::spawn_blocking(move || {
            let _ = watcher.join();
        })
        .await;
        0
    });
    deployment.stop_all();
    if let Err(e) = flusher.stop() {
        tracing::warn!("{e}");
    }
    code
}

/// SIGTERM and SIGINT, caught from the moment they are installed.
struct Signals(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

impl Signals {
    fn install() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => Signals(Some((term, int))),
            _ => Signals(None),
        }
    }

    async fn wait(self) {
        match self.0 {
            Some((mut term, mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

async fn serve_admin(
    listener: TcpListener,
    state: Arc<AdminState>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let (stream, _) = tokio::select! {
            a = listener.accept() => match a { Ok(a) => a, Err(_) => continue },
            _ = stop.changed() => return,
        };
        let st = Arc::clone(&state);
        let svc = hyper::service::service_fn(move |req| admin::handle(Arc::clone(&st), req));
        tokio::spawn(async move {
            let mut b = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            b.http1().title_case_headers(true);
            let _ = b.serve_connection(TokioIo::new(stream), svc).await;
        });
    }
}

/// The URL a remote service calls this server back on (an asynchronous reply): a listener bound
/// to every interface is reached on the loopback address.
fn listener_url(l: &TcpListener, bind: std::net::IpAddr, tls: bool) -> String {
    let port = l.local_addr().map_or(0, |a| a.port());
    let host = match bind {
        b if b.is_unspecified() && b.is_ipv6() => "[::1]".to_string(),
        b if b.is_unspecified() => "127.0.0.1".to_string(),
        std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        b => b.to_string(),
    };
    let scheme = if tls { "https" } else { "http" };
    format!("{scheme}://{host}:{port}")
}
