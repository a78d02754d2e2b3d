//! The cluster examples under `examples/`: their shard and merge commands run here, locally, and
//! give the one-machine results; their manifests and scripts say what the merge relies on.
//!
//! Kubernetes: the workspace has no YAML parser, so `examples/kubernetes/*.yaml` get a
//! structural check of their text (an Indexed Job whose completions and parallelism equal the
//! N of `--shard`, the index taken from `JOB_COMPLETION_INDEX`, every part written where the
//! merge's glob reads, one volume claim shared by both Jobs and the claim manifest); their `sim`
//! command lines are then run with `/scenarios` and `/results` mapped to local directories.
//! Slurm: every script passes `bash -n`, and the two batch scripts run with the array variables
//! Slurm would set. `tests/slurm.rs` runs the Slurm scripts on a real one-node cluster.

use std::path::{Path, PathBuf};
use std::process::Command;

const SIM: &str = env!("CARGO_BIN_EXE_sim");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("locksim-examples-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The value of the first `key: value` line (after indentation), unquoted.
fn field<'a>(yaml: &'a str, key: &str) -> &'a str {
    yaml.lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no `{key}:` in\n{yaml}"))
        .trim()
        .trim_matches('"')
}

/// The shell command of a Job's container (the `- exec sim …` item of its `args`).
fn command(yaml: &str) -> &str {
    yaml.lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix("- exec sim "))
        .unwrap_or_else(|| panic!("no `- exec sim …` args item in\n{yaml}"))
}

fn sh(script: &str, env: &[(&str, &str)]) -> (i32, String) {
    let out = Command::new("sh").arg("-c").arg(script).envs(env.iter().copied()).output().expect("sh runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// `sim run SCENARIO --seeds SEEDS --json OUT` on one machine.
fn one_machine(scenario: &str, seeds: &str, out: &Path) -> Vec<u8> {
    let s = Command::new(SIM)
        .args(["run", scenario, "--seeds", seeds, "--json", out.to_str().unwrap()])
        .output()
        .expect("sim runs");
    assert!(matches!(s.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&s.stderr));
    std::fs::read(out).unwrap()
}

#[test]
fn kubernetes_indexed_job_and_merge_fit_together_and_run() {
    let k8s = root().join("examples/kubernetes");
    let (shards, merge, pvc) =
        (read(&k8s.join("shards.yaml")), read(&k8s.join("merge.yaml")), read(&k8s.join("results-pvc.yaml")));
    assert_eq!(field(&shards, "kind"), "Job");
    assert_eq!(field(&shards, "completionMode"), "Indexed");
    let n = field(&shards, "completions");
    assert_eq!(field(&shards, "parallelism"), n, "one pod per shard at once");
    let shard_cmd = command(&shards);
    assert!(shard_cmd.contains(&format!("--shard \"$JOB_COMPLETION_INDEX/{n}\"")), "{shard_cmd}");
    assert!(shard_cmd.contains("--json \"/results/part-$JOB_COMPLETION_INDEX.json\""), "{shard_cmd}");
    let merge_cmd = command(&merge);
    assert!(merge_cmd.starts_with("merge /results/part-*.json "), "the merge reads every part: {merge_cmd}");
    assert_eq!(field(&merge, "kind"), "Job");
    // One volume: the claim both Jobs mount at /results is the one results-pvc.yaml creates,
    // shared between nodes.
    assert_eq!(field(&pvc, "kind"), "PersistentVolumeClaim");
    let claim = field(&pvc, "name");
    for job in [&shards, &merge] {
        assert_eq!(field(job, "claimName"), claim);
        assert_eq!(field(job, "mountPath"), "/results");
        assert_eq!(field(job, "image"), field(&shards, "image"));
    }
    assert!(pvc.contains("- ReadWriteMany"), "pods on several nodes write at once");
    let containerfile = read(&k8s.join("Containerfile"));
    assert!(containerfile.contains("--bin sim") && containerfile.contains("COPY scenarios /scenarios"));

    // The commands as the pods run them, /scenarios and /results mapped here; 3 seeds (not the
    // scenario's 200) keep it short, and with 4 shards two of the blocks are empty.
    let d = dir("k8s");
    let scenarios = format!("{}/", root().join("scenarios").display());
    let results = format!("{}/", d.display());
    let local =
        |cmd: &str| format!("exec '{SIM}' {}", cmd.replace("/scenarios/", &scenarios).replace("/results/", &results));
    let n: u64 = n.parse().unwrap();
    for k in 0..n {
        let index = k.to_string();
        let (code, out) = sh(&format!("{} --seeds 3", local(shard_cmd)), &[("JOB_COMPLETION_INDEX", &index)]);
        assert_eq!(code, 0, "shard {k}: {out}");
    }
    let (code, out) = sh(&local(merge_cmd), &[]);
    assert!(matches!(code, 0 | 1), "{out}");
    let scenario = format!("{scenarios}failover.toml");
    assert_eq!(std::fs::read(d.join("results.json")).unwrap(), one_machine(&scenario, "3", &d.join("one.json")));
    assert!(d.join("report/index.html").exists());
}

#[test]
fn slurm_scripts_parse_and_run_as_an_array() {
    let slurm = root().join("examples/slurm");
    for script in ["shards.sbatch", "merge.sbatch", "submit.sh"] {
        let s = Command::new("bash").arg("-n").arg(slurm.join(script)).output().expect("bash runs");
        assert!(s.status.success(), "{script}: {}", String::from_utf8_lossy(&s.stderr));
    }
    let shards = read(&slurm.join("shards.sbatch"));
    assert!(shards.contains("#SBATCH --array=0-3") && shards.contains("SHARDS=4"), "array size and N agree");
    assert!(read(&slurm.join("submit.sh")).contains("--dependency=\"afterok:"), "the merge waits for every shard");

    let d = dir("slurm");
    let results = d.join("results");
    let scenario = root().join("scenarios/failover.toml").display().to_string();
    let env = |k: &str| {
        vec![
            ("SIM", SIM.to_string()),
            ("SCENARIO", scenario.clone()),
            ("RESULTS", results.display().to_string()),
            ("SEEDS", "5".to_string()),
            ("SLURM_ARRAY_TASK_ID", k.to_string()),
        ]
    };
    for k in 0..4 {
        let s = Command::new("bash").arg(slurm.join("shards.sbatch")).envs(env(&k.to_string())).output().unwrap();
        assert!(s.status.success(), "task {k}: {}", String::from_utf8_lossy(&s.stderr));
    }
    let s = Command::new("bash").arg(slurm.join("merge.sbatch")).envs(env("")).output().unwrap();
    assert!(matches!(s.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&s.stderr));
    assert_eq!(std::fs::read(results.join("results.json")).unwrap(), one_machine(&scenario, "5", &d.join("one.json")));
}
