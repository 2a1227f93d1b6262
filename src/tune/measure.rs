//! Building a variant and running the program: the commands, the time
//! limit, the metric and the check. A failure of any kind is a reason (a
//! string), which excludes the configuration.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run measures (lower is better).
#[derive(Clone, Debug)]
pub enum Metric {
    /// The run's wall time, ms.
    WallTime,
    /// The first capture group (or the match) of the last match in the
    /// program's output.
    Regex(regex::Regex),
    /// A generated counter, summed over the sites (`stats:device_launches`):
    /// needs the stats build.
    Stats(String),
}

impl Metric {
    pub fn parse(text: Option<&str>) -> Result<Metric, String> {
        match text {
            None | Some("time") => Ok(Metric::WallTime),
            Some(s) if s.starts_with("stats:") => Ok(Metric::Stats(s[6..].to_string())),
            Some(s) => regex::Regex::new(s)
                .map(Metric::Regex)
                .map_err(|e| format!("`--metric {s}` is not a regular expression: {e}")),
        }
    }
}

/// What a finished run left.
pub struct RunOutput {
    pub wall_ms: f64,
    pub output: String,
}

/// Run `command` with `sh -c`, the environment `env`, and a time limit;
/// its standard output and error together. A non-zero exit, a signal or the
/// time limit is an error.
pub fn run_shell(
    command: &str,
    env: &[(String, String)],
    dir: &Path,
    timeout: Duration,
) -> Result<RunOutput, String> {
    let log = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    let out = log.reopen().map_err(|e| e.to_string())?;
    let err = log.reopen().map_err(|e| e.to_string())?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so that a hung run is killed with its children.
        cmd.process_group(0);
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run `{command}`: {e}"))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > timeout => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", timeout.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for `{command}`: {e}")),
        }
    };
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut output = String::new();
    let _ = std::fs::File::open(log.path()).and_then(|mut f| f.read_to_string(&mut output));
    if !status.success() {
        let tail: String = tail_lines(&output, 3);
        return Err(match status.code() {
            Some(c) => format!("exit status {c}{tail}"),
            None => format!("killed by a signal{tail}"),
        });
    }
    Ok(RunOutput { wall_ms, output })
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &lines[lines.len().saturating_sub(n)..];
    if tail.is_empty() {
        String::new()
    } else {
        format!(": {}", tail.join(" | "))
    }
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
    }
}

/// The metric's value in a run's output.
pub fn extract(metric: &Metric, run: &RunOutput) -> Result<f64, String> {
    match metric {
        Metric::WallTime => Ok(run.wall_ms),
        Metric::Regex(re) => {
            let caps = re
                .captures_iter(&run.output)
                .last()
                .ok_or_else(|| format!("the output has no match of `{re}`"))?;
            let text = caps
                .get(1)
                .or_else(|| caps.get(0))
                .map_or("", |m| m.as_str());
            text.trim()
                .parse::<f64>()
                .map_err(|_| format!("`{text}` (matched by `{re}`) is not a number"))
        }
        Metric::Stats(field) => {
            let stats = parse_stats(&run.output);
            if stats.is_empty() {
                return Err("the output has no `dpopt_stats` line (does the program call dpopt_stats_report?)".into());
            }
            let mut sum = 0u64;
            for counters in stats.values() {
                sum += counters
                    .get(field)
                    .ok_or_else(|| format!("`dpopt_stats` has no counter `{field}`"))?;
            }
            Ok(sum as f64)
        }
    }
}

/// The `dpopt_stats site=ID name=value ...` lines of `dpopt_stats_report`:
/// site -> counter -> value (summed when a site reports more than once).
pub fn parse_stats(
    output: &str,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> {
    let mut out: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> =
        Default::default();
    for line in output.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("dpopt_stats") {
            continue;
        }
        let mut site = None;
        let mut counters = Vec::new();
        for w in words {
            if let Some((k, v)) = w.split_once('=') {
                if k == "site" {
                    site = Some(v.to_string());
                } else if let Ok(n) = v.parse::<u64>() {
                    counters.push((k.to_string(), n));
                }
            }
        }
        if let Some(site) = site {
            let entry = out.entry(site).or_default();
            for (k, n) in counters {
                *entry.entry(k).or_default() += n;
            }
        }
    }
    out
}

/// Replace `{name}` placeholders.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in values {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

/// Quote for `sh`.
pub fn quote(path: &Path) -> String {
    let s = path.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A build directory's file for a build key.
pub fn artefact(work: &Path, key: &str, what: &str) -> PathBuf {
    work.join(format!("{key}.{what}"))
}
