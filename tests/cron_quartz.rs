//! The cron module against Quartz 2.3.2 itself, the contract xxl-job 2.4.2 defines.
//!
//! `quartz_vectors` replays answers recorded from Quartz (tests/data/cron/quartz_vectors.tsv, written by
//! tools/quartz-oracle/regenerate.sh). `live_quartz_differential` asks a running Quartz about freshly
//! generated expressions; it needs java and libquartz2-java, so it only runs with `--ignored`.
//! `cli_binary` runs the `xxl-job-admin cron` subcommand itself.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use xxl_job_admin::cron::CronExpression;

const VECTORS: &str = include_str!("data/cron/quartz_vectors.tsv");
const FIRE_TIMES: usize = 5;

/// One question put to Quartz: the expression, the start instant and the zone.
struct Case {
    expr: String,
    from_ms: i64,
    zone: String,
}

/// What Quartz answered.
#[derive(Debug, PartialEq)]
enum Answer {
    Invalid,
    /// Quartz accepted the expression but threw computing a fire time.
    Error,
    /// Quartz looped.
    Timeout,
    Times(Vec<i64>),
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(next)) => {
                chars.next();
                out.push(if next == 't' { '\t' } else { next });
            }
            _ => out.push(c),
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\t', "\\t")
}

/// Reads an oracle answer: the fields after the case's own three.
fn parse_answer(fields: &[&str]) -> Answer {
    match fields.first().copied() {
        Some("INVALID") => Answer::Invalid,
        Some("ERROR") => Answer::Error,
        Some("TIMEOUT") => Answer::Timeout,
        _ => Answer::Times(
            fields
                .iter()
                .filter(|f| !f.is_empty())
                .map(|f| f.parse().expect("fire time in epoch ms"))
                .collect(),
        ),
    }
}

/// What this crate answers, in the same terms.
fn our_answer(case: &Case) -> Answer {
    let Ok(cron) = CronExpression::parse(&case.expr) else { return Answer::Invalid };
    let zone: Tz = case.zone.parse().expect("known zone");
    let mut at = zone.timestamp_millis_opt(case.from_ms).single().expect("start in range");
    let mut times = Vec::new();
    while times.len() < FIRE_TIMES {
        let Some(next) = cron.next_after(&at) else { break };
        times.push(next.timestamp_millis());
        at = next;
    }
    Answer::Times(times)
}

/// None when we agree with Quartz, else a description of the difference.
fn compare(case: &Case, quartz: &Answer) -> Option<String> {
    let ours = our_answer(case);
    let agrees = match (quartz, &ours) {
        // Where Quartz cannot produce an answer we document our choice: valid, and it never fires.
        (Answer::Error, Answer::Times(times)) => times.is_empty(),
        (Answer::Timeout, Answer::Times(_)) => true,
        _ => *quartz == ours,
    };
    (!agrees).then(|| {
        let show = |answer: &Answer| match answer {
            Answer::Times(times) => {
                times.iter().map(|&t| format_ms(t, &case.zone)).collect::<Vec<_>>().join(", ")
            }
            other => format!("{other:?}"),
        };
        format!(
            "{:?} from {} in {}:\n    quartz: {}\n    ours:   {}",
            case.expr,
            format_ms(case.from_ms, &case.zone),
            case.zone,
            show(quartz),
            show(&ours)
        )
    })
}

fn format_ms(ms: i64, zone: &str) -> String {
    let zone: Tz = zone.parse().expect("known zone");
    let at = zone.timestamp_millis_opt(ms).single().expect("instant in range");
    format!("{ms} ({})", at.format("%Y-%m-%d %H:%M:%S%.3f %Z"))
}

fn report(mismatches: &[String], checked: usize) {
    const SHOWN: usize = 30;
    if !mismatches.is_empty() {
        let shown: Vec<&str> = mismatches.iter().take(SHOWN).map(String::as_str).collect();
        panic!(
            "{} of {checked} cases disagree with Quartz (first {}):\n{}",
            mismatches.len(),
            shown.len(),
            shown.join("\n")
        );
    }
}

#[test]
fn quartz_vectors() {
    let mut checked = 0;
    let mut counts = [0usize; 4];
    let mut fire_times = 0;
    let mut mismatches = Vec::new();
    for line in VECTORS.lines().filter(|line| !line.starts_with("# ")) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert!(fields.len() >= 4, "malformed vector line: {line:?}");
        let case = Case {
            expr: unescape(fields[0]),
            from_ms: fields[1].parse().expect("start in epoch ms"),
            zone: fields[2].to_string(),
        };
        let quartz = parse_answer(&fields[3..]);
        match &quartz {
            Answer::Times(times) => {
                counts[0] += 1;
                fire_times += times.len();
            }
            Answer::Invalid => counts[1] += 1,
            Answer::Error => counts[2] += 1,
            Answer::Timeout => counts[3] += 1,
        }
        checked += 1;
        mismatches.extend(compare(&case, &quartz));
    }
    println!(
        "checked {checked} Quartz vectors: {} valid ({fire_times} fire times), {} invalid, \
         {} where Quartz throws, {} where Quartz loops",
        counts[0], counts[1], counts[2], counts[3]
    );
    assert!(checked >= 1000, "only {checked} vectors found");
    report(&mismatches, checked);
}

/// The `cron` subcommand of the real binary: fire times on stdout, an invalid expression is exit code 2.
#[test]
fn cli_binary() {
    let cron = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_xxl-job-admin"))
            .arg("cron")
            .args(args)
            .output()
            .expect("run the binary")
    };
    let ok = cron(&["0 0 12 * * ?", "--from", "1735689600000", "--tz", "UTC", "--count", "2", "--epoch-ms"]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "1735732800000\n1735819200000\n");

    let invalid = cron(&["0 0 0 ? * * x", "--tz", "UTC"]);
    assert_eq!(invalid.status.code(), Some(2));
    assert!(invalid.stdout.is_empty());
    let reason = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        reason.contains("invalid cron expression \"0 0 0 ? * * x\"") && reason.contains("year field"),
        "{reason}"
    );
}

// ---------------------------------------------------------------------------------------------------
// Live comparison with Quartz.

/// A small deterministic generator (xorshift64*), so a failing run can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.below(options.len() as u64) as usize]
    }
}

const MONTH_NAMES: [&str; 12] =
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// One list item of a field whose values run from `lo` to `hi`.
fn random_item(rng: &mut Rng, lo: i64, hi: i64, names: &[&str]) -> String {
    let value = |rng: &mut Rng| {
        let v = rng.range(lo, hi);
        if !names.is_empty() && rng.chance(30) {
            names[(v - lo) as usize].to_lowercase()
        } else {
            v.to_string()
        }
    };
    let span = hi - lo + 1;
    match rng.below(10) {
        0..=3 => value(rng),
        4 | 5 => format!("{}-{}", value(rng), value(rng)),
        6 => format!("{}/{}", rng.range(lo, hi), rng.range(1, span)),
        7 => format!("*/{}", rng.range(1, span)),
        8 => format!("{}-{}/{}", rng.range(lo, hi), rng.range(lo, hi), rng.range(1, span)),
        _ => "*".to_string(),
    }
}

fn random_field(rng: &mut Rng, lo: i64, hi: i64, names: &[&str], star_percent: u64) -> String {
    if rng.chance(star_percent) {
        return "*".to_string();
    }
    let items = 1 + rng.below(3);
    (0..items).map(|_| random_item(rng, lo, hi, names)).collect::<Vec<_>>().join(",")
}

fn random_expression(rng: &mut Rng) -> String {
    let second = if rng.chance(60) { "0".to_string() } else { random_field(rng, 0, 59, &[], 10) };
    let minute = random_field(rng, 0, 59, &[], 25);
    let hour = random_field(rng, 0, 23, &[], 30);
    let month = random_field(rng, 1, 12, &MONTH_NAMES, 60);
    let (day_of_month, day_of_week) = if rng.chance(50) {
        let day = match rng.below(10) {
            0 => "L".to_string(),
            1 => format!("L-{}", rng.range(0, 30)),
            2 => "LW".to_string(),
            3 => format!("{}W", rng.range(1, 31)),
            _ => random_field(rng, 1, 31, &[], 30),
        };
        (day, "?".to_string())
    } else {
        let weekday = |rng: &mut Rng| {
            if rng.chance(50) {
                rng.range(1, 7).to_string()
            } else {
                rng.pick(&DAY_NAMES).to_string()
            }
        };
        let day = match rng.below(10) {
            0 | 1 => format!("{}#{}", weekday(rng), rng.range(1, 5)),
            2 => format!("{}L", weekday(rng)),
            _ => random_field(rng, 1, 7, &DAY_NAMES, 30),
        };
        ("?".to_string(), day)
    };
    let mut fields = vec![second, minute, hour, day_of_month, month, day_of_week];
    if rng.chance(15) {
        let year = rng.range(2024, 2040);
        fields.push(match rng.below(3) {
            0 => year.to_string(),
            1 => format!("{year}-{}", year + rng.range(0, 8)),
            _ => format!("{year}/{}", rng.range(1, 4)),
        });
    }
    let mut expr = fields.join(if rng.chance(10) { "\t" } else { " " });
    if rng.chance(10) {
        // An occasional typo explores the parser's lenient and strict corners.
        let mut chars: Vec<char> = expr.chars().collect();
        let at = rng.below(chars.len() as u64) as usize;
        // Fullwidth and Arabic-Indic digits: Java's number parsing reads them where Quartz uses it.
        let junk = rng.pick(&["X", "L", "W", "#", "/", "-", ",", "*", "?", "0", "7", " ", "１", "٣"]);
        let junk = junk.chars().next().expect("one char");
        match rng.below(3) {
            0 => chars.insert(at, junk),
            1 => {
                chars.remove(at);
            }
            _ => chars[at] = junk,
        }
        expr = chars.into_iter().collect();
    }
    expr
}

fn quartz_jar() -> PathBuf {
    std::env::var_os("QUARTZ_JAR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/java/quartz2.jar"))
}

fn run_tool(command: &mut Command) -> std::process::Output {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(output.status.success(), "{command:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    output
}

#[test]
#[ignore = "needs java + libquartz2-java; run with --ignored"]
fn live_quartz_differential() {
    let jar = quartz_jar();
    assert!(jar.is_file(), "{} not found: apt-get install libquartz2-java, or set QUARTZ_JAR", jar.display());
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/quartz-oracle/QuartzOracle.java");
    let classes = std::env::temp_dir().join(format!("quartz-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&classes).expect("temp dir");
    run_tool(Command::new("javac").arg("-d").arg(&classes).arg("-cp").arg(&jar).arg(&oracle));

    let seed = std::env::var("CRON_LIVE_SEED")
        .ok()
        .map(|s| s.parse().expect("CRON_LIVE_SEED is a number"))
        .unwrap_or_else(|| Utc::now().timestamp_nanos_opt().unwrap_or(1) as u64 | 1);
    println!("live Quartz comparison, CRON_LIVE_SEED={seed}");
    let mut rng = Rng(seed);
    let zones = ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"];
    let first = Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap().timestamp_millis();
    let last = Utc.with_ymd_and_hms(2036, 1, 1, 0, 0, 0).unwrap().timestamp_millis();
    let cases: Vec<Case> = (0..400)
        .map(|_| {
            let expr = random_expression(&mut rng);
            // Whole seconds: Quartz's W rule compares against a clock reading's milliseconds.
            let from_ms = rng.range(first / 1000, last / 1000) * 1000;
            Case { expr, from_ms, zone: rng.pick(&zones).to_string() }
        })
        .collect();

    let classpath = format!("{}:{}", classes.display(), jar.display());
    let mut child = Command::new("java")
        .arg("-cp")
        .arg(&classpath)
        .arg("QuartzOracle")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cannot run java");
    let mut stdin = child.stdin.take().expect("oracle stdin");
    let input: String =
        cases.iter().map(|c| format!("{}\t{}\t{}\n", escape(&c.expr), c.from_ms, c.zone)).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("oracle output");
    writer.join().expect("writer thread").expect("write to oracle");
    let _ = std::fs::remove_dir_all(&classes);
    assert!(output.status.success(), "oracle failed");

    let answers = String::from_utf8(output.stdout).expect("UTF-8 answers");
    let answers: Vec<&str> = answers.lines().collect();
    assert_eq!(answers.len(), cases.len(), "one answer per case");
    let mut mismatches = Vec::new();
    for (case, answer) in cases.iter().zip(answers) {
        let fields: Vec<&str> = answer.split('\t').collect();
        mismatches.extend(compare(case, &parse_answer(&fields)));
    }
    println!("compared {} random expressions with live Quartz", cases.len());
    report(&mismatches, cases.len());
}
