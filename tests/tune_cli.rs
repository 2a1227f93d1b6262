//! `dpopt tune` end to end without a GPU: a fake build (a shell script that
//! writes a "program" naming the variant's granularity) and a fake program
//! whose "time" is a function of the knob environment variables.

use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = r#"// two annotated sites
#include <cstdio>
__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
__global__ void parent(int *a, const int *len, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int m = len[i];
  // a comment that must survive --write
    #pragma dp threshold(128) coarsen(8)
  child<<<(m + 31) / 32, 32>>>(a + i * 64, m);
}
__global__ void other(int *a, const int *len, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int m = len[i];
#pragma dp coarsen(2) \
           consldt(warp)
  child<<<(m + 63) / 64, 64>>>(a + i * 64, m);
}
extern "C" int dpopt_knobs_from_env(void) __attribute__((weak));
int main() { if (dpopt_knobs_from_env) dpopt_knobs_from_env(); return 0; }
"#;

/// The fake build: the program is a script that knows the build key (from
/// `{out}`'s name) and prints time_ms = f(granularity, threshold, factor)
/// of both sites. Site one is best at grid t32 c4, site two at none t512 c1.
/// Every run appends a line to runs.log.
const BUILD: &str = r#"#!/bin/sh
# build.sh SRC OUT
src=$1 out=$2
grep -q dpopt "$src" || { echo "not transformed" >&2; exit 1; }
key=$(basename "$out" .exe)
case $key in block*) echo "error: block is broken" >&2; exit 2 ;; esac
cat > "$out" <<PROG
#!/bin/sh
echo run >> "\$(dirname "\$0")/runs.log"
sleep 0.02
key=$key
PROG
cat >> "$out" <<'PROG'
g1=${key%%-*}; rest=${key#*-}; g2=${rest%%-stats}
t1=$DPOPT_THRESHOLD_parent_1 c1=$DPOPT_COARSEN_parent_1
t2=$DPOPT_THRESHOLD_other_1 c2=$DPOPT_COARSEN_other_1
case $key in *stats) echo "dpopt_stats site=parent_1 requested=5000 direct=10"; echo "dpopt_stats site=other_1 requested=4000 direct=3" ;; esac
[ "$g1" = warp ] && [ "$t1" = 32 ] && exit 3
[ "$g1" = mb8 ] && [ "$t1" = 128 ] && { sleep 30; }
[ "$g2" = grid ] && echo "checksum=bad"
awk -v g1="$g1" -v t1="$t1" -v c1="$c1" -v g2="$g2" -v t2="$t2" -v c2="$c2" 'BEGIN {
  l = log(t1) / log(2) - 5; a = 10 + l * l + (c1 == 4 ? 0 : 1) + (g1 == "grid" ? 0 : 3)
  l2 = log(t2) / log(2) - 9; b = 20 + l2 * l2 + (c2 == 1 ? 0 : 2) + (g2 == "none" ? 0 : 4)
  printf "result time_ms=%.3f\n", a + b }'
PROG
chmod +x "$out"
"#;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.cu"), SOURCE).unwrap();
        std::fs::write(dir.path().join("build.sh"), BUILD).unwrap();
        Fixture { dir }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn runs(&self) -> usize {
        let log = self.work().join("runs.log");
        std::fs::read_to_string(log).map_or(0, |s| s.lines().count())
    }
    /// The build directory of the (only) fingerprint.
    fn work(&self) -> PathBuf {
        let root = self.path(".app.cu.dpopt-tune");
        std::fs::read_dir(&root)
            .ok()
            .and_then(|mut d| d.next())
            .map_or(root, |e| e.unwrap().path())
    }
    /// `dpopt tune` of the fixture with the fake build, metric and check.
    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_dpopt"));
        c.current_dir(self.dir.path())
            .args(["tune", "app.cu", "--build", "sh build.sh {src} {out}"])
            .args(["--metric", r"time_ms=([0-9.]+)", "--timeout", "2"])
            .args(["--check", "! grep -q checksum=bad \"$DPOPT_TUNE_OUTPUT\""]);
        c
    }
    fn tune(&self, extra: &[&str]) -> std::process::Output {
        self.command().args(extra).output().unwrap()
    }
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn chosen(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("chosen: "))
        .unwrap_or_else(|| panic!("no choice in:\n{out}"))
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn tunes_both_sites_excludes_failures_and_writes_back() {
    let f = Fixture::new();
    let out = f.tune(&["--write"]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    // Both sites reach their optimum's neighbourhood: site one grid with a
    // threshold near 32, site two without aggregation.
    let c = chosen(&all);
    let (s1, s2) = c.split_once('/').unwrap();
    assert!(s1.starts_with("grid-t"), "{c}\n{all}");
    assert!(s2.starts_with("none-t"), "{c}\n{all}");
    // 11 runs per site, one stats run.
    assert!(f.runs() <= 23, "{} runs\n{all}", f.runs());
    // Failures: the block build, warp t32 (exit 3), mb8 t128 (hang), grid
    // on site two (check); each reported where the search tried such a
    // point.
    assert!(all.contains("excluded"), "{all}");
    if all.contains("| block-") || all.contains("/block-") {
        assert!(all.contains("build failed"), "{all}");
    }
    for reason in ["exit status 3", "timed out", "wrong result"] {
        if all.contains(reason) {
            continue;
        }
        // Only reported when the search tried such a point.
        eprintln!("not tried: {reason}");
    }
    assert!(!s1.starts_with("block") && !s2.starts_with("block"));
    // --write: only the two directives changed.
    let written = std::fs::read_to_string(f.path("app.cu")).unwrap();
    let expect_line = |site: &str| {
        all.lines()
            .find(|l| l.contains(&format!("app.cu:{site}:")))
            .map(|l| l.split_once(": ").unwrap().1.to_string())
            .unwrap()
    };
    let first = expect_line("12");
    let second = expect_line("19");
    assert!(
        first.starts_with("#pragma dp") && first.contains("consldt(grid)"),
        "{first}"
    );
    let expected = SOURCE
        .replace(
            "    #pragma dp threshold(128) coarsen(8)",
            &format!("    {first}"),
        )
        .replace(
            "#pragma dp coarsen(2) \\\n           consldt(warp)",
            &second,
        );
    assert_eq!(written, expected);
    // The SVG and the state file.
    let svg = std::fs::read_to_string(f.path("app.cu.dpopt-tune.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<circle"));
    assert!(f.path("app.cu.dpopt-tune.json").exists());
}

#[test]
fn resumes_from_the_state_file() {
    let f = Fixture::new();
    // Interrupt a search after 7 runs (killed, as by Ctrl-C).
    let mut child = f
        .command()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    while f.runs() < 7 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before the interruption"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let after_first = f.runs();
    assert!(after_first < 20, "{after_first}");
    let second = f.tune(&[]);
    let all = text(&second);
    assert!(second.status.success(), "{all}");
    assert!(all.contains("resuming from"), "{all}");
    let after_second = f.runs();
    // The measurements before the interruption were not repeated: the whole
    // search made its budget (24) plus the one stats run, and at most the
    // run in flight when it was killed again.
    assert!(after_second <= 26, "{after_second} runs");
    // Resuming a finished search runs nothing.
    let third = f.tune(&[]);
    assert!(third.status.success());
    assert_eq!(f.runs(), after_second);
    assert_eq!(chosen(&text(&third)), chosen(&all));
    // --fresh starts over.
    let fourth = f.tune(&["--fresh", "--runs", "3", "--no-stats"]);
    assert!(fourth.status.success(), "{}", text(&fourth));
    assert!(!text(&fourth).contains("resuming"));
}

#[test]
fn every_configuration_failing_chooses_nothing() {
    let f = Fixture::new();
    let out = Command::new(env!("CARGO_BIN_EXE_dpopt"))
        .current_dir(f.dir.path())
        .args(["tune", "app.cu", "--build", "exit 1", "--runs", "4"])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("every configuration failed"), "{all}");
    assert_eq!(std::fs::read_to_string(f.path("app.cu")).unwrap(), SOURCE);
}

#[test]
fn a_file_without_sites_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain.cu"), "int main() { return 0; }\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dpopt"))
        .current_dir(dir.path())
        .args(["tune", "plain.cu", "--build", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no `#pragma dp` launch site"),
        "{}",
        text(&out)
    );
    let _ = Path::new("unused");
}
