//! Supervised worker processes. A case is sent to a worker and its response
//! awaited with a time limit; a worker that dies (abort, stack overflow,
//! signal) or runs past the limit is killed and replaced, and the case that
//! was in flight is re-run alone in a fresh worker to confirm it.

use crate::oracle::{Class, Violation};
use crate::protocol::{Request, Response};
use std::collections::BTreeSet;
use std::io::{self, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How to start a worker.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// The `dpopt-fuzz` executable (it is re-run as `dpopt-fuzz worker`).
    pub exe: PathBuf,
    pub dpopt: Option<PathBuf>,
    pub scratch: PathBuf,
    /// Per-case time limit for the in-process check (and for each CLI run).
    pub timeout: Duration,
}

impl WorkerSpec {
    /// The watchdog's limit for one request: the in-process check, plus the
    /// two CLI runs when asked for, plus slack.
    pub fn limit(&self, req: &Request) -> Duration {
        let cli_runs = if req.cli && self.dpopt.is_some() {
            2
        } else {
            0
        };
        self.timeout * (1 + cli_runs) + Duration::from_secs(2)
    }
}

/// The result of evaluating one case.
#[derive(Debug, Clone)]
pub enum Eval {
    Done(Response),
    /// The worker died while checking the case (confirmed alone).
    Crashed(String),
    /// The worker gave no answer within the limit (confirmed alone).
    Hung(Duration),
    /// A crash or hang that did not happen again when the case ran alone.
    Unconfirmed(String),
}

impl Eval {
    pub fn violations(&self) -> Vec<Violation> {
        match self {
            Eval::Done(r) => r.report.violations.clone(),
            Eval::Crashed(d) => vec![Violation::new(Class::Crash, d.clone())],
            Eval::Hung(limit) => vec![Violation::new(
                Class::Hang,
                format!("no result within {limit:?}"),
            )],
            Eval::Unconfirmed(_) => Vec::new(),
        }
    }

    pub fn classes(&self) -> BTreeSet<Class> {
        self.violations().iter().map(|v| v.class).collect()
    }
}

struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    responses: Receiver<io::Result<Response>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
}

impl Process {
    fn spawn(spec: &WorkerSpec) -> io::Result<Process> {
        let mut cmd = Command::new(&spec.exe);
        cmd.arg("worker")
            .arg("--scratch")
            .arg(&spec.scratch)
            .arg("--timeout-ms")
            .arg(spec.timeout.as_millis().to_string());
        if let Some(d) = &spec.dpopt {
            cmd.arg("--dpopt").arg(d);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, responses) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let resp = Response::read(&mut r);
                let end = resp.is_err();
                if tx.send(resp).is_err() || end {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let tail = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.extend_from_slice(&buf[..n]);
                    if t.len() > 16 * 1024 {
                        let cut = t.len() - 4 * 1024;
                        t.drain(..cut);
                    }
                }
            }
        });
        Ok(Process {
            child,
            stdin,
            responses,
            stderr,
            stderr_reader: Some(stderr_reader),
        })
    }

    /// Wait for the (dead or killed) process and describe how it ended.
    fn finish(mut self, kill: bool) -> String {
        if kill {
            let _ = self.child.kill();
        }
        self.stdin.take();
        let status = self.child.wait();
        if let Some(h) = self.stderr_reader.take() {
            let _ = h.join();
        }
        let tail = self
            .stderr
            .lock()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        let tail: String = tail
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("")
            .chars()
            .take(300)
            .collect();
        match status {
            Ok(s) => format!("worker {}; stderr: {tail}", describe(s)),
            Err(e) => format!("worker lost: {e}"),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                7 => " (SIGBUS)",
                _ => "",
            };
            return format!("killed by signal {sig}{name}");
        }
    }
    match status.code() {
        Some(c) => format!("exited with {c}"),
        None => "ended".to_string(),
    }
}

/// One supervised worker; its process is (re)started on demand.
pub struct Slot {
    spec: Arc<WorkerSpec>,
    process: Option<Process>,
}

impl Slot {
    pub fn new(spec: Arc<WorkerSpec>) -> Self {
        Slot {
            spec,
            process: None,
        }
    }

    /// Evaluate a case once.
    fn evaluate_once(&mut self, req: &Request) -> Eval {
        if self.process.is_none() {
            match Process::spawn(&self.spec) {
                Ok(p) => self.process = Some(p),
                Err(e) => return Eval::Crashed(format!("cannot start a worker: {e}")),
            }
        }
        let limit = self.spec.limit(req);
        let p = self.process.as_mut().expect("started");
        let sent = match p.stdin.as_mut() {
            Some(stdin) => req.write(stdin),
            None => Err(io::Error::other("no stdin")),
        };
        if sent.is_err() {
            let p = self.process.take().expect("started");
            return Eval::Crashed(p.finish(false));
        }
        match p.responses.recv_timeout(limit) {
            Ok(Ok(resp)) if resp.id == req.id => Eval::Done(resp),
            Ok(Ok(resp)) => {
                let p = self.process.take().expect("started");
                p.finish(true);
                Eval::Crashed(format!(
                    "protocol error: response {} for {}",
                    resp.id, req.id
                ))
            }
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                let p = self.process.take().expect("started");
                Eval::Crashed(p.finish(false))
            }
            Err(RecvTimeoutError::Timeout) => {
                let p = self.process.take().expect("started");
                p.finish(true);
                Eval::Hung(limit)
            }
        }
    }

    /// Evaluate a case; a crash or hang is confirmed by running the case
    /// again alone, in a fresh worker.
    pub fn evaluate(&mut self, req: &Request) -> Eval {
        let first = self.evaluate_once(req);
        match first {
            Eval::Crashed(d) => match self.evaluate_once(req) {
                again @ (Eval::Crashed(_) | Eval::Hung(_)) => again,
                _ => Eval::Unconfirmed(format!("crash not reproduced alone: {d}")),
            },
            Eval::Hung(limit) => match self.evaluate_once(req) {
                again @ (Eval::Crashed(_) | Eval::Hung(_)) => again,
                _ => Eval::Unconfirmed(format!("timeout ({limit:?}) not reproduced alone")),
            },
            done => done,
        }
    }
}

/// A set of slots that evaluates batches in parallel.
pub struct Pool {
    pub slots: Vec<Slot>,
}

impl Pool {
    pub fn new(spec: WorkerSpec, jobs: usize) -> Self {
        let spec = Arc::new(spec);
        Pool {
            slots: (0..jobs.max(1))
                .map(|_| Slot::new(Arc::clone(&spec)))
                .collect(),
        }
    }

    /// Evaluate every request; results in request order.
    pub fn run(&mut self, reqs: &[Request]) -> Vec<Eval> {
        let next = AtomicUsize::new(0);
        let results: Vec<Mutex<Option<Eval>>> = reqs.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for slot in self.slots.iter_mut() {
                let (next, results) = (&next, &results);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= reqs.len() {
                        break;
                    }
                    let eval = slot.evaluate(&reqs[i]);
                    if let Ok(mut r) = results[i].lock() {
                        *r = Some(eval);
                    }
                });
            }
        });
        results
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| Eval::Crashed("lost".into()))
            })
            .collect()
    }
}
