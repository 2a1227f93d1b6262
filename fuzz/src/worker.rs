//! The worker process: reads cases from standard input, checks each with
//! the oracle, writes one response per case. A crash or hang kills only the
//! worker; the coordinator sees which case was in flight.

use crate::coverage;
use crate::oracle::{self, CliCheck};
use crate::protocol::{Request, Response};
use std::io::{self, BufReader, BufWriter};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Settings the coordinator passes on the worker's command line.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    pub dpopt: Option<PathBuf>,
    pub scratch: PathBuf,
    pub timeout: Duration,
}

/// Serve requests until standard input closes.
pub fn serve(options: &WorkerOptions) -> io::Result<()> {
    oracle::install_panic_hook();
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    while let Some(req) = Request::read(&mut input)? {
        let response = handle(&req, options);
        response.write(&mut output)?;
    }
    oracle::remove_scratch(&options.scratch);
    Ok(())
}

/// Check one request (also used in-process by `dpopt-fuzz check`).
pub fn handle(req: &Request, options: &WorkerOptions) -> Response {
    let cli = match (&options.dpopt, req.cli) {
        (Some(dpopt), true) => Some(CliCheck {
            dpopt: dpopt.clone(),
            scratch: options.scratch.clone(),
            timeout: options.timeout,
            preexisting_output: req.preexisting_output,
        }),
        _ => None,
    };
    let start = Instant::now();
    coverage::reset();
    let mut report = oracle::check(&req.bytes, cli.as_ref(), req.keep_output);
    report.features = coverage::collect();
    Response {
        id: req.id,
        micros: start.elapsed().as_micros() as u64,
        report,
    }
}
