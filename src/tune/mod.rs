//! `dpopt tune`: search the clauses of every `#pragma dp` site of a file by
//! building the program once per granularity (with run-time knobs) and
//! running it with per-site knob values (docs/TUNING.md).

mod measure;
mod pragma_edit;
mod report;
pub mod search;
#[cfg(test)]
mod search_sim;
pub mod space;
mod state;

use crate::source::SourceFile;
use measure::{Metric, RunOutput};
use search::{Limits, SiteFacts};
use space::{Granularity, Point, SiteConfig};
use state::State;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The options of `dpopt tune`.
#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    /// The annotated .cu file whose `#pragma dp` sites are tuned.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Build command, run with `sh -c`: {src} (the transformed variant),
    /// {out} (the program to write), {dir} (FILE's directory), {defines}
    /// (-DDPOPT_RUNTIME_KNOBS and the variant's macros: pass them on).
    /// Default: `$DPOPT_NVCC` (or nvcc) -O3 -rdc=true -arch=ARCH -I {dir}
    /// {defines} {src} -o {out} -lcudadevrt.
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// Run command, run with `sh -c` in FILE's directory: {exe} is the
    /// program built. The knobs reach it as environment variables
    /// (`DPOPT_THRESHOLD_<site>`, ...): the program must call
    /// `dpopt_knobs_from_env()` before its first launch.
    #[arg(long, value_name = "CMD", default_value = "{exe}")]
    pub run: String,
    /// What to minimise: `time` (the run's wall time, the default), a
    /// regular expression whose first group is a number in the program's
    /// output (`'time_ms=([0-9.]+)'`), or `stats:COUNTER` (a generated
    /// counter summed over the sites, e.g. `stats:device_launches`).
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,
    /// A command that checks a run's result (exit 0: right); the run's
    /// output is in the file `$DPOPT_TUNE_OUTPUT`. A run that exits
    /// non-zero is wrong too.
    #[arg(long, value_name = "CMD")]
    pub check: Option<String>,
    /// Program runs of the search in all (default: 11 per site; with the
    /// stats run, 12 program runs per site).
    #[arg(long, value_name = "N")]
    pub runs: Option<usize>,
    /// Stop refining a site after N runs in a row without a 1% gain.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub plateau: usize,
    /// Time limit of one run, seconds (a run past it is excluded).
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0)]
    pub timeout: f64,
    /// Time limit of one build, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 900.0)]
    pub build_timeout: f64,
    /// GPU architecture of the default build.
    #[arg(long, default_value = "sm_90")]
    pub arch: String,
    /// Search DIR for `#include "..."` headers (as `dpopt transform -I`).
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Write the chosen clauses into FILE's pragmas (atomically; nothing
    /// else in the file changes).
    #[arg(long)]
    pub write: bool,
    /// Start afresh: ignore the saved state (FILE.dpopt-tune.json).
    #[arg(long)]
    pub fresh: bool,
    /// No stats build (it prunes sites that launch nothing and aggregation
    /// where there is little to aggregate, for one run).
    #[arg(long)]
    pub no_stats: bool,
    /// The state file (default FILE.dpopt-tune.json): one per input when a
    /// program is tuned for several inputs.
    #[arg(long, value_name = "PATH")]
    pub state: Option<PathBuf>,
    /// Build the screening variants (every granularity, and the stats
    /// build) and stop: run several of these in parallel before the searches.
    #[arg(long)]
    pub build_only: bool,
    /// Where to write the SVG of the search (default FILE.dpopt-tune.svg).
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
}

/// A tuned site: its id (the macros' suffix) and its pragma's line.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    pub id: String,
    pub line: usize,
    /// Its child is the kernel that launches it.
    pub recursive: bool,
}

pub fn main(args: &TuneArgs) -> ExitCode {
    match tune(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dpopt tune: error: {e}");
            ExitCode::from(1)
        }
    }
}

fn tune(args: &TuneArgs) -> Result<ExitCode, String> {
    let input = &args.input;
    let bytes =
        std::fs::read(input).map_err(|e| format!("cannot read `{}`: {e}", input.display()))?;
    let text = String::from_utf8(bytes.clone())
        .map_err(|_| format!("`{}` is not UTF-8", input.display()))?;
    let name = input.display().to_string();
    let dir = match input.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Absolute: the commands run in this directory and get these paths.
    let dir = dir.canonicalize().unwrap_or(dir);
    let options = crate::unit::Options {
        include_dirs: args.include_dirs.clone(),
        child_sources: Vec::new(),
        input_dir: Some(dir.clone()),
        defines: Vec::new(),
    };
    // The sites, as dpopt sees them.
    let file = SourceFile::new(&name, bytes.clone());
    let outcome = crate::run_with(&file, Some(&options), "<tune>", false);
    if outcome.has_errors() {
        let source = outcome.source(&file);
        for d in &outcome.diagnostics {
            eprintln!(
                "{}",
                crate::message_format::render(
                    d,
                    source,
                    crate::message_format::MessageFormat::Human
                )
            );
        }
        return Ok(ExitCode::from(1));
    }
    let pragmas = pragma_edit::pragma_lines(&text);
    let mut sites = Vec::new();
    // Promoted launches have no threshold, factor or granularity to search.
    for s in outcome.sites.iter().filter(|s| s.promotion.is_none()) {
        let line = s
            .location
            .rsplit(':')
            .nth(1)
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| pragmas.iter().any(|p| p.line == *l))
            .ok_or_else(|| {
                format!(
                    "site {} ({}): no `#pragma dp` line found for it",
                    s.id, s.location
                )
            })?;
        sites.push(Site {
            id: s.id.clone(),
            line,
            recursive: s.recursive,
        });
    }
    if sites.is_empty() {
        return Err(format!("`{name}` has no `#pragma dp` launch site to tune"));
    }
    if !text.contains("dpopt_knobs_from_env") {
        eprintln!(
            "dpopt tune: note: `{name}` does not mention dpopt_knobs_from_env(): unless another file of the program calls it \
             before the first launch, the knobs do not reach the program and every configuration of a build measures the same"
        );
    }
    let start = Point(
        sites
            .iter()
            .zip(&outcome.sites)
            .map(|(s, summary)| starting_config(&text, &pragmas, s.line, summary))
            .collect(),
    );
    let metric = Metric::parse(args.metric.as_deref())?;
    let build_cmd = args.build.clone().unwrap_or_else(|| {
        let nvcc = std::env::var("DPOPT_NVCC").unwrap_or_else(|_| "nvcc".into());
        format!(
            "{nvcc} -O3 -rdc=true -arch={} -I {{dir}} {{defines}} {{src}} -o {{out}} -lcudadevrt",
            args.arch
        )
    });
    let fp = state::fingerprint(&[
        &bytes,
        build_cmd.as_bytes(),
        args.run.as_bytes(),
        args.metric.as_deref().unwrap_or("time").as_bytes(),
        args.check.as_deref().unwrap_or("").as_bytes(),
    ]);
    let state_path = args.state.clone().unwrap_or_else(|| State::path_for(input));
    let (mut st, resumed) = if args.fresh {
        (
            State {
                fingerprint: fp.clone(),
                ..State::default()
            },
            false,
        )
    } else {
        State::load(&state_path, &fp)
    };
    if resumed {
        eprintln!(
            "dpopt tune: resuming from {} ({} measurements)",
            state_path.display(),
            st.measurements.len()
        );
    }
    // Builds live under the fingerprint: a changed input or command never
    // reuses a stale program.
    let work_root = dir.join(format!(
        ".{}.dpopt-tune",
        input.file_name().unwrap_or_default().to_string_lossy()
    ));
    if args.fresh {
        let _ = std::fs::remove_dir_all(&work_root);
    }
    // Keyed by what the programs depend on (not the run command), so that
    // searches for several inputs of one program share the builds.
    let work = work_root.join(state::fingerprint(&[&bytes, build_cmd.as_bytes()]));
    std::fs::create_dir_all(&work)
        .map_err(|e| format!("cannot create `{}`: {e}", work.display()))?;
    let site_ids: Vec<String> = sites.iter().map(|s| s.id.clone()).collect();
    let mut ctx = Context {
        args,
        text: &text,
        name: &name,
        dir: &dir,
        options: &options,
        sites: &sites,
        site_ids: &site_ids,
        build_cmd: &build_cmd,
        work: &work,
        metric: &metric,
        builds: HashMap::new(),
        st: &mut st,
        state_path: &state_path,
        new_runs: 0,
        progress: None,
    };
    if args.build_only {
        let mut failed = 0;
        for g in Granularity::SCREEN {
            let p = Point(
                start
                    .0
                    .iter()
                    .map(|c| SiteConfig {
                        granularity: g,
                        ..*c
                    })
                    .collect(),
            );
            if let Err(e) = ctx.build(&p, stats_metric_of(&metric)) {
                eprintln!("dpopt tune: {}: {e}", p.build_key());
                failed += 1;
            }
        }
        if !args.no_stats {
            if let Err(e) = ctx.build(&start, true) {
                eprintln!("dpopt tune: stats build: {e}");
            }
        }
        println!(
            "built {} variants in {}",
            Granularity::SCREEN.len() - failed,
            work.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Facts from one stats run at the starting point.
    let stats_metric = stats_metric_of(&metric);
    let mut facts: Vec<SiteFacts> = sites
        .iter()
        .map(|s| SiteFacts {
            recursive: s.recursive,
            ..SiteFacts::default()
        })
        .collect();
    if !args.no_stats {
        if ctx.st.stats.is_none() {
            match ctx.stats_run(&start) {
                Ok(stats) => ctx.st.stats = Some(stats),
                Err(e) => eprintln!("dpopt tune: note: the stats run failed ({e}): no pruning"),
            }
            ctx.save()?;
        }
        if let Some(stats) = &ctx.st.stats {
            if stats.is_empty() {
                eprintln!("dpopt tune: note: the stats build printed no `dpopt_stats` line (the program does not call dpopt_stats_report()): no pruning");
            }
            for (k, s) in sites.iter().enumerate() {
                if let Some(c) = stats.get(&s.id) {
                    let requested = c.get("requested").copied().unwrap_or(0);
                    if requested == 0 {
                        facts[k].tune = false;
                        eprintln!("dpopt tune: site {}: no launch requested in the stats run: left as written", s.id);
                    } else if requested < FEW_LAUNCHES {
                        facts[k].granularities = vec![Granularity::None, Granularity::Floor];
                        eprintln!(
                            "dpopt tune: site {}: {requested} launches requested in the stats run: too few to aggregate, aggregation not tried",
                            s.id
                        );
                    }
                }
            }
        }
    }
    // The floor only where dpopt accepts it for the site.
    for (k, s) in sites.iter().enumerate() {
        let floor = start.with(
            k,
            SiteConfig {
                granularity: Granularity::Floor,
                ..start.0[k]
            },
        );
        if facts[k].granularities.contains(&Granularity::Floor) && !ctx.accepts(&floor) {
            facts[k].granularities.retain(|&g| g != Granularity::Floor);
            eprintln!(
                "dpopt tune: site {}: dpopt refuses `floor` here (`dpopt check` says why): not tried",
                s.id
            );
        }
    }
    let tuned = facts.iter().filter(|f| f.tune).count().max(1);
    let limits = Limits {
        // With the stats run, 12 program runs per site.
        runs: args.runs.unwrap_or(DEFAULT_RUNS_PER_SITE * tuned),
        plateau: args.plateau.max(1),
    };
    ctx.progress = Some(progress_bar(limits.runs as u64));
    let mut evaluate = |p: &Point, sample: u32| ctx.evaluate(p, sample, stats_metric);
    let prior = search::Prior::suite();
    let result = search::search(&start, &facts, limits, &prior, &mut evaluate);
    if let Some(pb) = ctx.progress.take() {
        pb.finish_and_clear();
    }
    ctx.save()?;
    let new_runs = ctx.new_runs;
    let stats_runs = usize::from(ctx.st.stats.is_some());
    // Report.
    print!(
        "{}",
        report::table(&result, &site_ids, stats_runs, new_runs)
    );
    let svg_path = args.svg.clone().unwrap_or_else(|| {
        let mut n = input.file_name().unwrap_or_default().to_os_string();
        n.push(".dpopt-tune.svg");
        input.with_file_name(n)
    });
    crate::output::write_atomically(&svg_path, report::svg(&result, &name).as_bytes())?;
    println!("search plot: {}", svg_path.display());
    let Some((best, value)) = &result.best else {
        eprintln!("dpopt tune: error: every configuration failed; nothing chosen");
        return Ok(ExitCode::from(1));
    };
    println!("chosen: {} ({value:.4})", best.key());
    for (s, c) in sites.iter().zip(&best.0) {
        println!(
            "  {name}:{}: {}",
            s.line,
            pragma_edit::rewrite_directive("#pragma dp", &c.clauses())
        );
    }
    println!(
        "  knobs of a -DDPOPT_RUNTIME_KNOBS build, or as -D flags: {}",
        best.defines(&site_ids).join(" ")
    );
    if args.write {
        let edits: Vec<(usize, Vec<String>)> = sites
            .iter()
            .zip(&best.0)
            .map(|(s, c)| (s.line, c.clauses()))
            .collect();
        let new_text = pragma_edit::rewrite(&text, &edits)?;
        // The file may have changed while the search ran: write only over what was read.
        let now = std::fs::read(input).map_err(|e| format!("cannot read `{name}`: {e}"))?;
        if now != bytes {
            return Err(format!(
                "`{name}` changed during the search: not written (the clauses are above)"
            ));
        }
        crate::output::write_atomically(input, new_text.as_bytes())?;
        println!("wrote the chosen clauses into {name}");
    }
    Ok(ExitCode::SUCCESS)
}

fn stats_metric_of(metric: &Metric) -> bool {
    matches!(metric, Metric::Stats(_))
}

/// Below this many launch requests in a run, aggregation has too little to merge.
const FEW_LAUNCHES: u64 = 64;
/// The search's runs per tuned site by default.
const DEFAULT_RUNS_PER_SITE: usize = 11;

/// The site's clauses as written (threshold, coarsen, consldt), for the
/// starting point; what is not written is off.
/// The configuration a site starts from: its pragma's clauses, or for a
/// bare `#pragma dp` the default dpopt chose for it (its knobs' values and
/// its aggregation).
fn starting_config(
    text: &str,
    pragmas: &[pragma_edit::PragmaLine],
    line: usize,
    summary: &crate::SiteSummary,
) -> SiteConfig {
    let Some(p) = pragmas.iter().find(|p| p.line == line) else {
        return SiteConfig::new(Granularity::None, 128, 8);
    };
    let written = &text[p.start..p.end];
    let bare = written
        .split_once("dp")
        .is_some_and(|(_, rest)| rest.trim().trim_matches('\\').trim().is_empty());
    let chosen;
    let d = if bare {
        let knob = |prefix: &str| {
            summary
                .macros
                .iter()
                .find(|(name, _)| name.starts_with(prefix))
                .map_or("1".to_string(), |(_, v)| v.clone())
        };
        chosen = format!(
            "threshold({}) coarsen({}) {}",
            knob("DPOPT_THRESHOLD_"),
            knob("DPOPT_COARSEN_"),
            summary.aggregation.as_deref().unwrap_or("")
        );
        chosen.as_str()
    } else {
        written
    };
    if regex::Regex::new(r"\bfloor\b").is_ok_and(|re| re.is_match(d)) {
        return SiteConfig::new(
            Granularity::Floor,
            num_clause(d, "threshold").unwrap_or(1),
            num_clause(d, "coarsen").unwrap_or(1),
        );
    }
    let num = |name: &str| num_clause(d, name);
    let granularity = regex::Regex::new(r"consldt\s*\(\s*(\w+)\s*(?:,\s*(\d+))?")
        .ok()
        .and_then(|re| re.captures(d))
        .map_or(Granularity::None, |c| match &c[1] {
            "warp" => Granularity::Warp,
            "block" => Granularity::Block,
            "multiblock" => {
                Granularity::Multiblock(c.get(2).and_then(|g| g.as_str().parse().ok()).unwrap_or(8))
            }
            _ => Granularity::Grid,
        });
    SiteConfig::new(
        granularity,
        num("threshold").unwrap_or(1),
        num("coarsen").unwrap_or(1),
    )
}

/// The value of clause `name(N)` in `d`.
fn num_clause(d: &str, name: &str) -> Option<u32> {
    let re = regex::Regex::new(&format!(r"\b{name}\s*\(\s*(\d+)\s*\)")).ok()?;
    re.captures(d)?.get(1)?.as_str().parse().ok()
}

fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} tuning [{bar:30}] {pos}/{len} runs {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb
}

struct Context<'a> {
    args: &'a TuneArgs,
    text: &'a str,
    name: &'a str,
    dir: &'a Path,
    options: &'a crate::unit::Options,
    sites: &'a [Site],
    site_ids: &'a [String],
    build_cmd: &'a str,
    work: &'a Path,
    metric: &'a Metric,
    /// Build key -> the program, or why it failed.
    builds: HashMap<String, Result<PathBuf, String>>,
    st: &'a mut State,
    state_path: &'a Path,
    new_runs: usize,
    progress: Option<indicatif::ProgressBar>,
}

impl Context<'_> {
    fn save(&self) -> Result<(), String> {
        self.st.save(self.state_path)
    }

    fn evaluate(&mut self, p: &Point, sample: u32, stats: bool) -> Result<f64, String> {
        let key = State::key(&p.key(), sample);
        if let Some(v) = self.st.measurements.get(&key) {
            if let Some(pb) = &self.progress {
                pb.inc(1);
            }
            return v.clone();
        }
        let value = self.build(p, stats).and_then(|exe| {
            if let Some(pb) = &self.progress {
                pb.set_message(p.key());
            }
            self.new_runs += 1;
            let run = self.run(&exe, p)?;
            measure::extract(self.metric, &run)
        });
        if let (Err(e), Some(pb)) = (&value, &self.progress) {
            pb.println(format!("excluded {}: {e}", p.key()));
        } else if let Err(e) = &value {
            eprintln!("dpopt tune: excluded {}: {e}", p.key());
        }
        self.st.measurements.insert(key, value.clone());
        if let Some(pb) = &self.progress {
            pb.inc(1);
        }
        if let Err(e) = self.save() {
            eprintln!("dpopt tune: warning: cannot save the state: {e}");
        }
        value
    }

    fn run(&self, exe: &Path, p: &Point) -> Result<RunOutput, String> {
        let cmd = measure::fill(&self.args.run, &[("exe", measure::quote(exe))]);
        let env = p.env(self.site_ids);
        let out = measure::run_shell(
            &cmd,
            &env,
            self.dir,
            Duration::from_secs_f64(self.args.timeout.max(0.001)),
        )?;
        if let Some(check) = &self.args.check {
            let log = self.work.join("last-run.txt");
            std::fs::write(&log, &out.output).map_err(|e| e.to_string())?;
            let mut env = env.clone();
            env.push(("DPOPT_TUNE_OUTPUT".into(), log.display().to_string()));
            measure::run_shell(
                check,
                &env,
                self.dir,
                Duration::from_secs_f64(self.args.timeout.max(0.001)),
            )
            .map_err(|e| format!("wrong result (`--check` failed: {e})"))?;
        }
        Ok(out)
    }

    /// The source of the point's build: each site's granularity clause,
    /// with threshold and coarsening clauses so that their run-time knobs
    /// exist.
    fn variant(&self, p: &Point) -> Result<String, String> {
        let edits: Vec<(usize, Vec<String>)> = self
            .sites
            .iter()
            .zip(&p.0)
            .map(|(s, c)| {
                let mut clauses = vec!["threshold(128)".to_string(), "coarsen(8)".to_string()];
                clauses.extend(c.granularity.clause());
                (s.line, clauses)
            })
            .collect();
        pragma_edit::rewrite(self.text, &edits)
    }

    /// Whether dpopt transforms the point's variant (no build, no run): the
    /// floor is refused for some sites (a recursive child, a parent that
    /// makes other launches).
    fn accepts(&self, p: &Point) -> bool {
        let Ok(text) = self.variant(p) else {
            return false;
        };
        let file = SourceFile::new(self.name, text.into_bytes());
        !crate::run_with(&file, Some(self.options), self.name, false).has_errors()
    }

    /// The program for the point's granularities (built once).
    fn build(&mut self, p: &Point, stats: bool) -> Result<PathBuf, String> {
        let mut key = p.build_key();
        if stats {
            key.push_str("-stats");
        }
        if let Some(b) = self.builds.get(&key) {
            return b.clone();
        }
        if let Some(why) = self.st.failed_builds.get(&key) {
            return Err(why.clone());
        }
        let exe = measure::artefact(self.work, &key, "exe");
        let result = if exe.exists() {
            Ok(exe.clone())
        } else {
            self.build_now(p, &key, stats, &exe)
        };
        if let Err(why) = &result {
            self.st.failed_builds.insert(key.clone(), why.clone());
            let _ = self.save();
        }
        self.builds.insert(key, result.clone());
        result
    }

    fn build_now(
        &mut self,
        p: &Point,
        key: &str,
        stats: bool,
        exe: &Path,
    ) -> Result<PathBuf, String> {
        if let Some(pb) = &self.progress {
            pb.set_message(format!("building {key}"));
        }
        let file = SourceFile::new(self.name, self.variant(p)?.into_bytes());
        let src = measure::artefact(self.work, key, "cu");
        let outcome = crate::run_with(&file, Some(self.options), &src.display().to_string(), true);
        let Some(out) = outcome.output else {
            let first = outcome
                .diagnostics
                .iter()
                .find(|d| d.is_error())
                .map_or(String::new(), |d| format!(": {}", d.label));
            return Err(format!("dpopt refused the variant{first}"));
        };
        crate::output::write_atomically(&src, &out)?;
        let mut defines = vec!["-DDPOPT_RUNTIME_KNOBS".to_string()];
        defines.extend(p.group_defines(self.site_ids));
        if stats {
            defines.push("-DDPOPT_STATS".into());
        }
        let cmd = measure::fill(
            self.build_cmd,
            &[
                ("src", measure::quote(&src)),
                ("out", measure::quote(exe)),
                ("dir", measure::quote(self.dir)),
                ("defines", defines.join(" ")),
            ],
        );
        let _ = std::fs::remove_file(exe);
        let env = vec![
            ("DPOPT_TUNE_SRC".to_string(), src.display().to_string()),
            ("DPOPT_TUNE_OUT".to_string(), exe.display().to_string()),
            ("DPOPT_TUNE_DEFINES".to_string(), defines.join(" ")),
        ];
        let built = measure::run_shell(
            &cmd,
            &env,
            self.dir,
            Duration::from_secs_f64(self.args.build_timeout.max(0.001)),
        );
        let log = measure::artefact(self.work, key, "log");
        match built {
            Ok(out) => {
                let _ = std::fs::write(&log, &out.output);
                if exe.exists() {
                    Ok(exe.to_path_buf())
                } else {
                    Err(format!("the build wrote no `{}`", exe.display()))
                }
            }
            Err(e) => Err(format!("build failed ({e})")),
        }
    }

    /// One run of the stats build at `p`: the counters per site.
    fn stats_run(
        &mut self,
        p: &Point,
    ) -> Result<std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>, String>
    {
        let exe = self.build(p, true)?;
        self.new_runs += 1;
        let out = self.run(&exe, p)?;
        Ok(measure::parse_stats(&out.output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start_of(source: &str) -> SiteConfig {
        let file = SourceFile::new("t.cu", source.as_bytes().to_vec());
        let outcome = crate::run_with(&file, None, "<tune>", false);
        assert!(!outcome.has_errors(), "{:?}", outcome.diagnostics);
        let pragmas = pragma_edit::pragma_lines(source);
        starting_config(source, &pragmas, pragmas[0].line, &outcome.sites[0])
    }

    const CHILD: &str = "__global__ void child(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = i; }\n";

    #[test]
    fn a_site_starts_from_its_clauses_or_from_its_default() {
        let site = |pragma: &str| {
            format!("{CHILD}__global__ void parent(int *a, int n) {{\n{pragma}\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}}\nvoid run(int *a) {{ parent<<<1, 32>>>(a, 64); }}\n")
        };
        assert_eq!(
            start_of(&site("#pragma dp threshold(64) consldt(multiblock, 4)")),
            SiteConfig::new(Granularity::Multiblock(4), 64, 1)
        );
        assert_eq!(
            start_of(&site("#pragma dp threshold(32) coarsen(2) floor")),
            SiteConfig::new(Granularity::Floor, 32, 2)
        );
        // A bare pragma starts from the default dpopt chose for the site.
        assert_eq!(
            start_of(&site("#pragma dp")),
            SiteConfig::new(Granularity::Grid, 128, 8)
        );
    }
}
