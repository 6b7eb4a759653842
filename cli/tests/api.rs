//! The HTTP API beyond serve.rs's route walk: workspaces created over HTTP, run options, hunks
//! in run results, structured conflicts, hunk splitting, overlay snapshots, events that are
//! never lost silently; and the bugs found on the way (pending counts, `artifact get -o -`,
//! openapi.json's schema reference). The server is the real binary, started with the token.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Env;

/// A `rewind serve --require-token` child on a free loopback port, with the token it wrote.
struct Server {
    child: Child,
    url: String,
    token: String,
    agent: ureq::Agent,
}

impl Server {
    fn start(env: &Env) -> Server {
        let mut child = env
            .cmd()
            .args([
                "--json",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--require-token",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn rewind serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        let url = v["listening"].as_str().expect("listening").to_string();
        let token = std::fs::read_to_string(env.store.join("serve.token"))
            .expect("serve.token")
            .trim()
            .to_string();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        Server {
            child,
            url,
            token,
            agent,
        }
    }

    /// `method path` with a JSON body (or none): (status, JSON body).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let auth = format!("Bearer {}", self.token);
        let r = match (method, body) {
            ("GET", _) => self.agent.get(&url).header("Authorization", &auth).call(),
            ("DELETE", _) => self
                .agent
                .delete(&url)
                .header("Authorization", &auth)
                .call(),
            ("POST", b) => self
                .agent
                .post(&url)
                .header("Authorization", &auth)
                .header("Content-Type", "application/json")
                .send(b.unwrap_or(json!({})).to_string()),
            (m, _) => panic!("method {m}"),
        };
        let mut r = r.expect("request");
        let status = r.status().as_u16();
        let mut text = String::new();
        r.body_mut()
            .as_reader()
            .read_to_string(&mut text)
            .expect("body");
        let v = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, v)
    }

    /// `PUT path` with raw bytes: (status, JSON body).
    fn put_bytes(&self, path: &str, data: &[u8]) -> (u16, Value) {
        self.send_body("PUT", path, "application/octet-stream", data)
    }

    /// `method path` (PUT or POST) with a body of `content_type`: (status, JSON body).
    fn send_body(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let request = match method {
            "PUT" => self.agent.put(&url),
            "POST" => self.agent.post(&url),
            m => panic!("method {m}"),
        };
        let mut r = request
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("Content-Type", content_type)
            .send(body)
            .expect("request");
        let text = r.body_mut().read_to_string().expect("body");
        (
            r.status().as_u16(),
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    fn get(&self, path: &str) -> Value {
        let (s, v) = self.call("GET", path, None);
        assert_eq!(s, 200, "GET {path}: {v}");
        v
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let (s, v) = self.call("POST", path, Some(body.clone()));
        assert!((200..300).contains(&s), "POST {path} {body}: {s} {v}");
        v
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn openapi() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../serve/openapi.json"
    ))
    .expect("serve/openapi.json");
    serde_json::from_str(&text).expect("openapi.json parses")
}

/// a.txt in [`setup`]'s workspace.
const A_TXT: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

/// A workspace with one snapshot and `target/` ignored.
fn setup() -> Env {
    let env = Env::new();
    env.write("a.txt", A_TXT.as_bytes());
    env.write(".gitignore", b"target/\n");
    env.ok(&["init"]);
    env.ok(&["snapshot", "-m", "base"]);
    env
}

fn ws_id(srv: &Server) -> u64 {
    srv.get("/v1/workspaces")[0]["id"]
        .as_u64()
        .expect("a workspace")
}

#[test]
fn artifact_get_dash_writes_standard_output() {
    let env = Env::new();
    let src = env.tmp.path().join("in.bin");
    std::fs::write(&src, b"artifact bytes\n").unwrap();
    env.ok(&["artifact", "put", "k", src.to_str().unwrap()]);
    let out = env
        .cmd()
        .current_dir(&env.ws)
        .args(["artifact", "get", "k", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, b"artifact bytes\n");
    assert!(
        !env.ws.join("-").exists(),
        "`-o -` wrote a file named `-` instead of standard output"
    );
}

#[test]
fn openapi_names_schema_files_that_exist() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../serve/openapi.json"
    ))
    .unwrap();
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let named: Vec<&str> = text
        .match_indices("schemas/")
        .map(|(i, _)| {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/._-".contains(c)))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('.')
        })
        .filter(|s| s.ends_with(".json"))
        .collect();
    assert!(!named.is_empty(), "RunResult names its schema file");
    for f in named {
        assert!(
            root.join(f).is_file(),
            "openapi.json names {f}, which does not exist"
        );
    }
}

/// Overlays' `pending` counts what `overlay diff` lists: not ignored outputs (listed apart)
/// and not paths taken out by a reject.
#[test]
fn pending_counts_only_the_reviewable_changes() {
    let env = setup();
    for backend in ["copy", "auto"] {
        let id = env.ok(&["overlay", "create", "--backend", backend]);
        let id = id.trim();
        env.ok(&[
            "overlay",
            "run",
            id,
            "--",
            "sh",
            "-c",
            "echo x >> a.txt; echo new > n.txt; mkdir -p target; echo o > target/out; echo p > target/out2",
        ]);
        let pending = |env: &Env| -> u64 {
            let list: Value =
                serde_json::from_str(&env.ok(&["--json", "overlay", "list"])).unwrap();
            let row = list
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"].as_u64().is_some_and(|n| n.to_string() == id))
                .cloned()
                .unwrap();
            row["pending"].as_u64().unwrap()
        };
        let diff: Value =
            serde_json::from_str(&env.ok(&["--json", "overlay", "diff", id])).unwrap();
        let listed = diff["files"].as_array().map_or(0, Vec::len) as u64;
        assert_eq!(listed, 2, "{backend}: {diff}");
        assert_eq!(
            pending(&env),
            2,
            "{backend}: ignored outputs are not pending"
        );
        let srv = Server::start(&env);
        let api = |srv: &Server| {
            srv.get("/v1/overlays")
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"].as_u64().is_some_and(|n| n.to_string() == id))
                .unwrap()["pending"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(api(&srv), 2, "{backend}: GET /v1/overlays");
        env.ok(&["overlay", "reject", id]);
        let diff: Value =
            serde_json::from_str(&env.ok(&["--json", "overlay", "diff", id])).unwrap();
        assert_eq!(diff["files"].as_array().map_or(0, Vec::len), 0);
        assert_eq!(
            pending(&env),
            0,
            "{backend}: rejected paths are not pending"
        );
        assert_eq!(api(&srv), 0, "{backend}: GET /v1/overlays after reject");
        env.ok(&["overlay", "drop", id]);
    }
}

/// A daemon started for a test, stopped when dropped.
struct Daemon(std::path::PathBuf);

impl Daemon {
    fn start(env: &Env) -> Daemon {
        env.ok(&["daemon", "start"]);
        Daemon(env.store.clone())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = crate::common::rewind_bin()
            .arg("--store")
            .arg(&self.0)
            .args(["daemon", "stop"])
            .output();
    }
}

/// Server-sent events on a thread: each event's id (None for a `gap`) and its JSON.
fn events(
    srv: &Server,
    query: &str,
    last: Option<u64>,
) -> std::sync::mpsc::Receiver<(Option<u64>, Value)> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let url = format!("{}/v1/events?token={}&{query}", srv.url, srv.token);
    std::thread::spawn(move || {
        let mut req = ureq::get(&url);
        if let Some(l) = last {
            req = req.header("Last-Event-ID", &l.to_string());
        }
        let r = req.call().expect("events");
        let _ = ready_tx.send(());
        let (mut id, mut data) = (None, None);
        for line in BufReader::new(r.into_body().into_reader()).lines() {
            let Ok(line) = line else { return };
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse().ok();
            } else if let Some(d) = line.strip_prefix("data:") {
                data = serde_json::from_str::<Value>(d.trim()).ok();
                if let Some(v) = &data {
                    assert_server_event(v);
                }
            } else if line.is_empty() {
                // An event ends at a blank line; its fields come in any order.
                if let Some(v) = data.take()
                    && tx.send((id.take(), v)).is_err()
                {
                    return;
                }
                id = None;
            }
        }
    });
    ready_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the event stream opened");
    rx
}

/// `v` is what openapi.json says an event's data is (`ServerEvent`), and reads back as the
/// wire type unchanged.
fn assert_server_event(v: &Value) {
    let doc = openapi();
    let schema = json!({
        "allOf": [{"$ref": "#/components/schemas/ServerEvent"}],
        "components": doc["components"],
    });
    let validator = jsonschema::validator_for(&schema).expect("ServerEvent compiles");
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{v}");
    let typed: rewind::wire::ServerEvent =
        serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"));
    assert_eq!(&serde_json::to_value(&typed).unwrap(), v);
    assert_eq!(Some(typed.kind()), v["event"].as_str(), "{v}");
}

/// The first event `want` accepts, calling `poke` between waits (a write the watch may
/// not have seen yet is written again).
fn wait_for(
    rx: &std::sync::mpsc::Receiver<(Option<u64>, Value)>,
    what: &str,
    mut poke: impl FnMut(),
    want: impl Fn(&Value) -> bool,
) -> (Option<u64>, Value) {
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < Duration::from_secs(60) {
        match rx.recv_timeout(Duration::from_millis(300)) {
            Ok((id, v)) if want(&v) => return (id, v),
            Ok((_, v)) => seen.push(v),
            Err(_) => poke(),
        }
    }
    panic!("no {what} event; saw {seen:?}")
}

fn ws_path(srv: &Server, ws: u64) -> String {
    srv.get(&format!("/v1/workspaces/{ws}"))["path"]
        .as_str()
        .expect("a path")
        .to_string()
}

#[test]
fn init_route_registers_a_directory_and_refuses_bad_paths() {
    let env = setup();
    let srv = Server::start(&env);
    let dir = env.tmp.path().join("fresh");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("f.txt"), b"f\n").unwrap();
    let canon = dir.canonicalize().unwrap();
    let (s, v) = srv.call(
        "POST",
        "/v1/workspaces",
        Some(json!({"path": canon.to_str().unwrap()})),
    );
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["path"], canon.to_str().unwrap());
    let id = v["id"].as_u64().unwrap();
    assert!(
        srv.get("/v1/workspaces")
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["id"] == id),
        "listed"
    );
    let taken = srv.post(
        &format!("/v1/workspaces/{id}/snapshots"),
        json!({"message": "first"}),
    );
    assert_eq!(taken["snapshot"]["files"], 1, "{taken}");
    let (s, v) = srv.call(
        "POST",
        "/v1/workspaces",
        Some(json!({"path": canon.to_str().unwrap()})),
    );
    assert_eq!((s, v["id"].as_u64()), (200, Some(id)), "known: the same id");
    for (body, code) in [
        (json!({"path": "relative/dir"}), "bad_request"),
        (json!({"path": "/nonexistent/rewind/dir"}), "not_found"),
        (json!({"dir": "/tmp"}), "bad_request"),
    ] {
        let (s, v) = srv.call("POST", "/v1/workspaces", Some(body.clone()));
        assert!((400..500).contains(&s), "{body}: {s} {v}");
        assert!(
            v["code"] == code || code == "not_found" && v["code"].is_string(),
            "{body}: {v}"
        );
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    }
}

/// `(route, body extra)`: the workspace's run route and an overlay's, for the same checks.
fn run_routes(env: &Env, srv: &Server) -> Vec<String> {
    let ws = ws_id(srv);
    let ov = env.ok(&["overlay", "create", "--backend", "copy"]);
    vec![
        format!("/v1/workspaces/{ws}/run"),
        format!("/v1/overlays/{}/run", ov.trim()),
    ]
}

/// Reads `rel` where the run wrote it: the workspace, or the overlay's directory.
fn read_after(env: &Env, srv: &Server, route: &str, rel: &str) -> Option<String> {
    let root = if route.starts_with("/v1/overlays/") {
        let ov = route
            .trim_start_matches("/v1/overlays/")
            .trim_end_matches("/run");
        std::path::PathBuf::from(
            srv.get(&format!("/v1/overlays/{ov}"))["path"]
                .as_str()
                .unwrap(),
        )
    } else {
        env.ws.clone()
    };
    std::fs::read_to_string(root.join(rel)).ok()
}

fn run_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schemas/run-result.schema.json"
    ))
    .unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_run_result(v: &Value) {
    let errors: Vec<String> = run_schema().iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{v}");
}

#[test]
fn run_options_work_on_both_run_routes() {
    let env = setup();
    let srv = Server::start(&env);
    for route in run_routes(&env, &srv) {
        // A contract: only docs/ may change; `revert` puts the rest back.
        let v = srv.post(
            &route,
            json!({
                "command": ["sh", "-c", "mkdir -p docs; echo d > docs/d.md; echo x >> a.txt"],
                "contract": {"allow": ["docs/**"]},
                "on_violation": "revert",
            }),
        );
        assert_run_result(&v);
        let paths: Vec<&str> = v["violations"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x["path"].as_str())
            .collect();
        assert_eq!(paths, ["a.txt"], "{route}: {v}");
        assert_eq!(v["on_violation"], "revert", "{route}");
        assert_eq!(v["reverted"], json!(["a.txt"]), "{route}: {v}");
        assert_eq!(
            read_after(&env, &srv, &route, "a.txt").as_deref(),
            Some(A_TXT),
            "{route}: the violation was reverted"
        );
        // A bad glob is refused before anything runs.
        let (s, e) = srv.call(
            "POST",
            &route,
            Some(
                json!({"command": ["sh", "-c", "echo y > y.txt"], "contract": {"allow": ["a/[b"]}}),
            ),
        );
        assert_eq!(
            (s, e["code"].as_str()),
            (400, Some("bad_request")),
            "{route}: {e}"
        );
        assert!(
            read_after(&env, &srv, &route, "y.txt").is_none(),
            "{route}: nothing ran"
        );
        // `fail` is the result's exit reason.
        let (s, v) = srv.call(
            "POST",
            &route,
            Some(json!({"command": ["sh", "-c", "echo z >> a.txt"], "contract": {"forbid": ["a.txt"]}, "on_violation": "fail"})),
        );
        assert_eq!(s, 200, "{route}: {v}");
        assert_eq!(v["exit_reason"], "contract_violation", "{route}: {v}");

        // max_patch_bytes: a patch over the limit is kept as an artifact, not inline.
        let v = srv.post(
            &route,
            json!({
                "command": ["sh", "-c", "seq 1 200 > big.txt"],
                "capture_patch": true,
                "max_patch_bytes": 64,
            }),
        );
        assert_run_result(&v);
        assert!(v["patch"].is_null(), "{route}: {v}");
        assert!(v["patch_ref"].is_string(), "{route}: {v}");
        assert!(v["patch_bytes"].as_u64().unwrap() > 64, "{route}");
        let v = srv.post(
            &route,
            json!({"command": ["sh", "-c", "echo s > small.txt"], "capture_patch": true}),
        );
        assert!(
            v["patch"].as_str().is_some_and(|p| p.contains("+s")),
            "{route}: {v}"
        );

        // ignore: the globs' paths are in neither snapshot, so not in the diff. An overlay's
        // state keeps its base's rules: there the option is refused, not dropped.
        if route.starts_with("/v1/overlays/") {
            let (s, e) = srv.call(
                "POST",
                &route,
                Some(json!({"command": ["true"], "ignore": ["*.log"]})),
            );
            assert_eq!((s, e["code"].as_str()), (400, Some("bad_request")), "{e}");
        } else {
            let v = srv.post(
            &route,
            json!({"command": ["sh", "-c", "echo l > run.log; echo k > kept.txt"], "ignore": ["*.log"]}),
        );
            let changed: Vec<&str> = v["diff"]["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].as_str().unwrap())
                .collect();
            assert_eq!(changed, ["kept.txt"], "{route}: {v}");
        }

        // scratch: the command gets a scratch directory whose files are kept with the run
        // (not in an overlay, where the command would not see it: refused).
        if route.starts_with("/v1/overlays/") {
            let (s, e) = srv.call(
                "POST",
                &route,
                Some(json!({"command": ["true"], "scratch": true})),
            );
            assert_eq!((s, e["code"].as_str()), (400, Some("bad_request")), "{e}");
            continue;
        }
        let v = srv.post(
            &route,
            json!({"command": ["sh", "-c", "echo notes > \"$REWIND_SCRATCH/notes\""], "scratch": true}),
        );
        assert_run_result(&v);
        assert_eq!(v["scratch"]["files"], 1, "{route}: {v}");
        let prefix = v["scratch"]["prefix"].as_str().unwrap();
        let list = env.ok(&["artifact", "ls"]);
        assert!(list.contains(&format!("{prefix}notes")), "{route}: {list}");
    }
}

#[test]
fn run_result_has_hunks_when_asked_on_both_routes() {
    let env = setup();
    let srv = Server::start(&env);
    for route in run_routes(&env, &srv) {
        let v = srv.post(
            &route,
            json!({"command": ["sh", "-c", "sed -i 's/^three$/THREE/' a.txt"], "hunks": true}),
        );
        assert_run_result(&v);
        let f = &v["diff"]["files"][0];
        assert_eq!(f["path"], "a.txt", "{route}: {v}");
        let hunks = f["hunks"].as_array().expect("hunks");
        assert_eq!(hunks.len(), 1, "{route}: {v}");
        let id = hunks[0]["id"].as_str().unwrap();
        assert!(hunks[0]["lines"].to_string().contains("+THREE"), "{route}");
        // The ids are the ones the follow-up calls take: accept (overlay) or revert.
        if route.starts_with("/v1/overlays/") {
            let ov = route
                .trim_start_matches("/v1/overlays/")
                .trim_end_matches("/run");
            srv.post(&format!("/v1/overlays/{ov}/accept"), json!({"hunks": [id]}));
        } else {
            let ws = ws_id(&srv);
            srv.post(
                &format!("/v1/workspaces/{ws}/revert"),
                json!({"from": v["before"], "to": v["after"], "hunks": [id]}),
            );
            assert!(
                !std::fs::read_to_string(env.path("a.txt"))
                    .unwrap()
                    .contains("THREE")
            );
            env.ok(&["undo"]);
        }
        assert!(
            std::fs::read_to_string(env.path("a.txt"))
                .unwrap()
                .contains("THREE"),
            "{route}"
        );
        env.write(
            "a.txt",
            b"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
        );
        env.ok(&["snapshot"]);
        // Without `hunks`, none.
        let v = srv.post(&route, json!({"command": ["sh", "-c", "echo q >> a.txt"]}));
        assert!(v["diff"]["files"][0].get("hunks").is_none(), "{route}: {v}");
    }
}

#[test]
fn conflicts_are_structured_without_asking() {
    let env = setup();
    let srv = Server::start(&env);
    let ov = env.ok(&["overlay", "create", "--backend", "copy"]);
    let ov = ov.trim();
    srv.post(
        &format!("/v1/overlays/{ov}/run"),
        json!({"command": ["sh", "-c", "sed -i 's/^two$/OVERLAY/' a.txt; echo n > n.txt"]}),
    );
    env.write(
        "a.txt",
        b"one\nWORKSPACE\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
    );
    let v = srv.post(&format!("/v1/overlays/{ov}/accept"), json!({}));
    let conflicts = v["conflicts"].as_array().expect("conflicts");
    assert_eq!(conflicts.len(), 1, "{v}");
    let c = &conflicts[0];
    assert_eq!(c["path"], "a.txt");
    assert!(c["why"].as_str().is_some_and(|w| !w.is_empty()), "{c}");
    assert!(c["regions"].as_u64().is_some_and(|r| r >= 1), "{c}");
    // The rest was accepted; the conflicting file is untouched and still pending.
    assert_eq!(std::fs::read_to_string(env.path("n.txt")).unwrap(), "n\n");
    assert!(
        std::fs::read_to_string(env.path("a.txt"))
            .unwrap()
            .contains("WORKSPACE")
    );
    let d = srv.get(&format!("/v1/overlays/{ov}/diff"));
    assert_eq!(d["files"][0]["path"], "a.txt", "{d}");
    // `abort` still refuses the whole accept.
    let (s, e) = srv.call(
        "POST",
        &format!("/v1/overlays/{ov}/accept"),
        Some(json!({"policy": "abort"})),
    );
    assert_eq!((s, e["code"].as_str()), (409, Some("conflict")), "{e}");
}

#[test]
fn split_parts_are_accepted_one_by_one() {
    let env = setup();
    let srv = Server::start(&env);
    let ov = env.ok(&["overlay", "create", "--backend", "copy"]);
    let ov = ov.trim();
    srv.post(
        &format!("/v1/overlays/{ov}/run"),
        json!({"command": ["sh", "-c", "sed -i -e 's/^two$/TWO/' -e 's/^five$/FIVE/' a.txt"]}),
    );
    let d = srv.get(&format!("/v1/overlays/{ov}/diff"));
    let hunks = d["files"][0]["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 1, "both changes in one hunk: {d}");
    let hunk = hunks[0]["id"].as_str().unwrap();
    let v = srv.post(&format!("/v1/overlays/{ov}/split"), json!({"hunk": hunk}));
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{v}");
    assert!(parts[0]["lines"].to_string().contains("+TWO"), "{v}");
    let first = parts[0]["id"].as_str().unwrap();
    srv.post(
        &format!("/v1/overlays/{ov}/accept"),
        json!({"hunks": [first]}),
    );
    let a = std::fs::read_to_string(env.path("a.txt")).unwrap();
    assert!(a.contains("TWO\n") && a.contains("\nfive\n"), "{a}");
    let d = srv.get(&format!("/v1/overlays/{ov}/diff"));
    assert!(
        d.to_string().contains("+FIVE"),
        "the other part is pending: {d}"
    );
    for (body, code) in [
        (json!({"hunk": "000000000000"}), "bad_request"),
        (json!({"hunk": ""}), "bad_request"),
        (json!({"hunks": [hunk]}), "bad_request"),
    ] {
        let (s, e) = srv.call(
            "POST",
            &format!("/v1/overlays/{ov}/split"),
            Some(body.clone()),
        );
        assert!((400..500).contains(&s), "{body}: {s} {e}");
        assert_eq!(e["code"], code, "{body}: {e}");
    }
}

#[test]
fn the_served_openapi_document_is_the_file() {
    let env = setup();
    let srv = Server::start(&env);
    assert_eq!(srv.get("/v1/openapi.json"), openapi());
}

#[test]
fn an_overlay_checkpoint_keeps_its_state_with_message_and_metadata() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let ov = env.ok(&["overlay", "create", "--backend", "copy"]);
    let ov = ov.trim();
    srv.post(
        &format!("/v1/overlays/{ov}/run"),
        json!({"command": ["sh", "-c", "echo step1 > s.txt"]}),
    );
    let (s, v) = srv.call(
        "POST",
        &format!("/v1/overlays/{ov}/snapshots"),
        Some(json!({"message": "after step 1", "meta": {"turn": "1"}})),
    );
    assert_eq!(s, 201, "{v}");
    let snap = v["snapshot"].clone();
    assert_eq!(snap["message"], "after step 1");
    assert_eq!(snap["meta"]["turn"], "1");
    assert_eq!(snap["meta"]["overlay"], ov);
    let id = snap["id"].as_str().unwrap().to_string();
    srv.post(
        &format!("/v1/overlays/{ov}/run"),
        json!({"command": ["sh", "-c", "echo step2 > s.txt"]}),
    );
    // Not in the workspace's log: the workspace never held that tree.
    let log = srv.get(&format!("/v1/workspaces/{ws}/snapshots"));
    assert!(!log.to_string().contains(&id), "{log}");
    // Dropped overlay: the checkpoint still holds step 1, and restores into the workspace.
    env.ok(&["overlay", "drop", ov]);
    env.ok(&["gc"]);
    srv.post(
        &format!("/v1/workspaces/{ws}/restore"),
        json!({"rev": id, "paths": ["s.txt"]}),
    );
    assert_eq!(
        std::fs::read_to_string(env.path("s.txt")).unwrap(),
        "step1\n"
    );
    let (s, e) = srv.call(
        "POST",
        "/v1/overlays/999/snapshots",
        Some(json!({"message": "x"})),
    );
    assert_eq!((s, e["code"].as_str()), (404, Some("not_found")), "{e}");
    let (s, e) = srv.call(
        "POST",
        &format!("/v1/overlays/{ov}/snapshots"),
        Some(json!({"tags": ["t"]})),
    );
    assert!((400..500).contains(&s), "{e}");
}

#[test]
fn last_event_id_replays_what_was_missed_or_says_gap() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let rx = events(&srv, &format!("workspace={ws}"), None);
    env.write("one.txt", b"1\n");
    env.ok(&["snapshot", "-m", "one"]);
    let (first, _) = wait_for(&rx, "snapshot", || {}, |v| v["event"] == "snapshot");
    let first = first.expect("an id");
    drop(rx);
    // Missed while disconnected:
    env.write("two.txt", b"2\n");
    env.ok(&["snapshot", "-m", "two"]);
    std::thread::sleep(Duration::from_millis(800));
    let rx = events(&srv, &format!("workspace={ws}"), Some(first));
    let (id, v) = wait_for(
        &rx,
        "replayed snapshot",
        || {},
        |v| v["event"] == "snapshot",
    );
    assert!(id.is_some_and(|i| i > first), "{id:?}");
    let log = srv.get(&format!("/v1/workspaces/{ws}/snapshots"));
    assert_eq!(v["id"], log[0]["id"], "the missed snapshot");
    // An id from before this server's life: a gap, how much unknown.
    let rx = events(&srv, &format!("workspace={ws}"), Some(1));
    let (id, g) = wait_for(&rx, "gap", || {}, |v| v["event"] == "gap");
    assert_eq!((id, g["last_event_id"].as_u64()), (None, Some(1)), "{g}");
    assert!(g["missed"].is_null(), "{g}");
    let (s, e) = srv.call("GET", "/v1/events?last_event_id=x", None);
    assert_eq!((s, e["code"].as_str()), (400, Some("bad_request")), "{e}");
}

#[test]
fn a_stream_opened_before_the_daemon_gets_file_events_once_it_is_up() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let rx = events(&srv, &format!("workspace={ws}"), None);
    env.ok(&["watch", "on"]);
    let _d = Daemon::start(&env);
    wait_for(
        &rx,
        "daemon up",
        || {},
        |v| v["event"] == "daemon" && v["state"] == "up",
    );
    let mut n = 0;
    let (_, v) = wait_for(
        &rx,
        "changed",
        || {
            n += 1;
            env.write("late.txt", format!("{n}\n").as_bytes());
        },
        |v| v["event"] == "changed" && v["paths"].to_string().contains("late.txt"),
    );
    assert_eq!(v["workspace"], ws_path(&srv, ws));
}

#[test]
fn writes_inside_a_copy_overlay_are_events() {
    let env = setup();
    env.ok(&["watch", "on"]);
    let _d = Daemon::start(&env);
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let ov = env.ok(&["overlay", "create", "--backend", "copy"]);
    let ov: u64 = ov.trim().parse().unwrap();
    let dir = std::path::PathBuf::from(
        srv.get(&format!("/v1/overlays/{ov}"))["path"]
            .as_str()
            .unwrap(),
    );
    let rx = events(&srv, &format!("workspace={ws}"), None);
    let mut n = 0;
    let (_, v) = wait_for(
        &rx,
        "changed in the overlay",
        || {
            n += 1;
            std::fs::write(dir.join("in-overlay.txt"), format!("{n}\n")).unwrap();
        },
        |v| {
            v["event"] == "changed"
                && v["overlay"] == ov
                && v["paths"].to_string().contains("in-overlay.txt")
        },
    );
    assert_eq!(v["workspace"], ws_path(&srv, ws), "{v}");
    assert!(
        !v["paths"].to_string().contains("tree/"),
        "paths relative to the overlay's directory: {v}"
    );
    // The workspace's own writes are events without `overlay`.
    let (_, v) = wait_for(
        &rx,
        "changed in the workspace",
        || env.write("in-ws.txt", b"w\n"),
        |v| v["event"] == "changed" && v["paths"].to_string().contains("in-ws.txt"),
    );
    assert!(v.get("overlay").is_none(), "{v}");
}

/// `GET /v1/workspaces/{ws}/sessions` answers what `log --by-session --json` prints (the same
/// library call and wire shape), and a workspace id that names nothing is a 404.
#[test]
fn sessions_route_lists_what_log_by_session_does() {
    let env = setup();
    let tool = |session: &str| {
        env.ok(&[
            "snapshot",
            "-q",
            "--meta",
            &format!("session={session}"),
            "--meta",
            "label=tool",
        ]);
    };
    env.write("a.txt", b"changed by A\n");
    tool("A");
    env.write("b.txt", b"written by B\n");
    tool("B");
    let cli: Value = serde_json::from_str(&env.ok(&["--json", "log", "--by-session"])).unwrap();
    assert_eq!(cli.as_array().map(Vec::len), Some(2), "{cli}");
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let api = srv.get(&format!("/v1/workspaces/{ws}/sessions"));
    assert_eq!(api, cli);
    assert_eq!(api[0]["session"], "B");
    assert_eq!(api[0]["files"], json!(["b.txt"]));
    assert_eq!(api[1]["present"], "wholly");
    let (status, v) = srv.call("GET", "/v1/workspaces/999/sessions", None);
    assert_eq!(
        (status, v["code"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );
}

/// The overlay's runs over HTTP: `GET /v1/overlays/{ov}/runs` groups the hunks by run, and
/// accept and reject take `{"run": N}`; an unknown run is a 400 that changes nothing, and
/// `run` with `hunks` is refused.
#[test]
fn overlay_runs_route_and_accept_by_run() {
    let env = Env::new();
    let base: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    env.write("f.txt", base.as_bytes());
    env.ok(&["snapshot", "-q"]);
    let id = env
        .ok(&["overlay", "create", "--backend", "copy"])
        .trim()
        .to_string();
    for (n, word) in [(10, "TEN"), (11, "ELEVEN")] {
        let script = format!("sed -i 's/^line {n}$/{word}/' f.txt");
        env.ok(&["overlay", "run", &id, "--", "sh", "-c", &script]);
    }
    let srv = Server::start(&env);
    let runs = srv.get(&format!("/v1/overlays/{id}/runs"));
    let groups = runs["runs"].as_array().expect("runs");
    assert_eq!(groups.len(), 2, "{runs}");
    assert_eq!(
        (groups[0]["run"].as_u64(), groups[1]["run"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(
        groups[1]["files"][0]["hunks"][0]["lines"]
            .as_array()
            .unwrap()
            .contains(&json!("+ELEVEN\n"))
    );

    let (status, v) = srv.call(
        "POST",
        &format!("/v1/overlays/{id}/accept"),
        Some(json!({"run": 5})),
    );
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("bad_request")),
        "{v}"
    );
    let (status, _) = srv.call(
        "POST",
        &format!("/v1/overlays/{id}/accept"),
        Some(json!({"run": 1, "hunks": ["abc"]})),
    );
    assert_eq!(status, 400);
    assert_eq!(std::fs::read_to_string(env.path("f.txt")).unwrap(), base);

    let r = srv.post(&format!("/v1/overlays/{id}/accept"), json!({"run": 2}));
    assert!(r["op"].is_u64(), "{r}");
    assert_eq!(
        std::fs::read_to_string(env.path("f.txt")).unwrap(),
        base.replace("line 11\n", "ELEVEN\n")
    );
    let r = srv.post(&format!("/v1/overlays/{id}/reject"), json!({"run": 1}));
    assert!(r["op"].is_u64(), "{r}");
    let runs = srv.get(&format!("/v1/overlays/{id}/runs"));
    assert_eq!(runs["runs"], json!([]), "nothing pending");
}

/// `GET /v1/workspaces/{ws}/runs` answers what `diff A B --by-run --json` prints, and revert
/// takes `{"run": N}`: run 2's line goes, run 1's neighbouring line stays; an unknown run is a
/// 400 that changes nothing.
#[test]
fn workspace_runs_route_and_revert_by_run() {
    let env = Env::new();
    let base: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    env.write("f.txt", base.as_bytes());
    env.ok(&["init"]);
    let a = env.ok(&["snapshot", "-q", "-m", "base"]).trim().to_string();
    env.ok(&["run", "-q", "--", "sed", "-i", "10s/.*/ONE/", "f.txt"]);
    env.ok(&["run", "-q", "--", "sed", "-i", "11s/.*/TWO/", "f.txt"]);
    let b = env.ok(&["snapshot", "-q", "-m", "end"]).trim().to_string();
    let cli: Value =
        serde_json::from_str(&env.ok(&["--json", "diff", &a, &b, "--by-run"])).unwrap();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let api = srv.get(&format!("/v1/workspaces/{ws}/runs?from={a}&to={b}"));
    assert_eq!(api, cli);
    assert_eq!(api["units"].as_array().map(Vec::len), Some(2), "{api}");

    let before = std::fs::read(env.path("f.txt")).unwrap();
    let (status, v) = srv.call(
        "POST",
        &format!("/v1/workspaces/{ws}/revert"),
        Some(json!({"from": a, "to": b, "run": 9})),
    );
    assert_eq!(
        (status, v["code"].as_str()),
        (400, Some("bad_request")),
        "{v}"
    );
    assert_eq!(std::fs::read(env.path("f.txt")).unwrap(), before);
    let (status, v) = srv.call("GET", &format!("/v1/workspaces/{ws}/runs?from={a}"), None);
    assert_eq!(status, 400, "{v}");

    srv.post(
        &format!("/v1/workspaces/{ws}/revert"),
        json!({"from": a, "to": b, "run": 2}),
    );
    let want: String = (1..=20)
        .map(|i| match i {
            10 => "ONE\n".to_string(),
            _ => format!("line {i}\n"),
        })
        .collect();
    assert_eq!(
        String::from_utf8(std::fs::read(env.path("f.txt")).unwrap()).unwrap(),
        want
    );
}

/// A snapshot is one object on every front end: `log --json`'s row, the API's list and show,
/// and the MCP server's (wire::Snapshot), each adding only its own extras.
#[test]
fn the_cli_and_the_api_print_a_snapshot_alike() {
    let env = setup();
    env.ok(&["snapshot", "-q", "-m", "", "--meta", "k=v", "--tag", "t1"]);
    let strip = |mut v: Value, extras: &[&str]| {
        for k in extras {
            v.as_object_mut().expect("object").remove(*k);
        }
        v
    };
    let cli: Value = serde_json::from_str(&env.ok(&["--json", "log", "-n", "1"])).unwrap();
    let cli = cli[0].clone();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let api = srv.get(&format!("/v1/workspaces/{ws}/snapshots?limit=1"));
    let api = api[0].clone();
    assert_eq!(cli, api);
    assert_eq!(api["message"], "", "an empty message is \"\", not null");
    assert_eq!(api["workspace_id"], ws);
    let id = cli["id"].as_str().unwrap();
    let shown = srv.get(&format!("/v1/workspaces/{ws}/snapshots/{id}"));
    assert_eq!(strip(shown, &["changes"]), strip(cli, &["restored"]));
}

/// A name that is not UTF-8 can be named over HTTP too: `path_bytes` (base64 of the exact
/// bytes, as the output gives them) in queries and `paths_bytes` in bodies.
#[test]
fn the_api_names_a_path_that_is_not_utf8() {
    use base64::Engine;
    use std::os::unix::ffi::OsStrExt;
    let env = setup();
    let name: &[u8] = b"caf\xe9.txt";
    crate::common::write_file(&env.ws, name, b"one\n");
    env.write("other.txt", b"x\n");
    env.ok(&["snapshot", "-q", "-m", "with it"]);
    crate::common::write_file(&env.ws, name, b"two\n");
    env.write("other.txt", b"y\n");
    let b64 = base64::engine::general_purpose::STANDARD.encode(name);
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let q: String = form_urlencoded_b64(&b64);
    let d = srv.get(&format!("/v1/workspaces/{ws}/diff?path_bytes={q}"));
    let files = d["files"].as_array().expect("files");
    assert_eq!(files.len(), 1, "{d}");
    assert_eq!(files[0]["path_bytes"], b64.as_str(), "{d}");
    srv.post(
        &format!("/v1/workspaces/{ws}/restore"),
        json!({"rev": "@", "paths_bytes": [b64]}),
    );
    let full = env.ws.join(std::ffi::OsStr::from_bytes(name));
    assert_eq!(std::fs::read(full).unwrap(), b"one\n");
    assert_eq!(
        std::fs::read(env.path("other.txt")).unwrap(),
        b"y\n",
        "only that path"
    );
    let (status, v) = srv.call(
        "POST",
        &format!("/v1/workspaces/{ws}/restore"),
        Some(json!({"rev": "@", "paths_bytes": ["Li4vZXRj"]})),
    );
    assert_eq!(status, 400, "../etc is refused: {v}");
}

/// Base64's `+`, `/` and `=` escaped for a query.
fn form_urlencoded_b64(b64: &str) -> String {
    b64.replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D")
}

/// A revert is one object too: `revert --json` and the API's revert answer the same
/// `wire::Revert` (here a dry run, which both can make of the same state).
#[test]
fn the_cli_and_the_api_report_a_revert_alike() {
    let env = setup();
    env.write("a.txt", b"ONE\ntwo\n");
    env.ok(&["snapshot", "-q", "-m", "edit"]);
    let cli: Value =
        serde_json::from_str(&env.ok(&["--json", "revert", "@~1", "@", "--dry-run"])).unwrap();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let api = srv.post(
        &format!("/v1/workspaces/{ws}/revert"),
        json!({"from": "@~1", "to": "@", "check": true}),
    );
    assert_eq!(api, cli);
    assert_eq!(api["dry_run"], true);
    assert_eq!(api["files"][0]["path"], "a.txt", "{api}");
    assert_eq!(api["conflicts"], json!([]));
}

/// The CLI's `--json` and the API answer the same object for status, diff (with and without
/// hunks, across a rename and a name that is not UTF-8) and an overlay's diff: one wire type
/// each, so no field has two names or is there on one side only.
#[test]
fn cli_and_api_answer_the_same_status_and_diff() {
    let env = setup();
    env.write("b.txt", b"bee\nbee\nbee\nbee\n");
    let one = crate::common::snap(&env, "one");
    env.write("a.txt", A_TXT.replace("two", "TWO").as_bytes());
    std::fs::remove_file(env.path("b.txt")).unwrap();
    // A rename with an edit.
    env.write("moved/b.txt", b"bee\nbee\nBEE\nbee\n");
    crate::common::write_file(&env.ws, b"caf\xe9.txt", b"latin-1\n");
    let two = crate::common::snap(&env, "two");
    // Live edits, and a path a scan passes over (a fifo).
    env.write("a.txt", b"gone\n");
    crate::common::write_file(&env.ws, b"n\xffw.txt", b"new\n");
    let fifo = env.path("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());

    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let cli = |args: &[&str]| crate::common::json(&env, args);

    let status = cli(&["status"]);
    assert_eq!(status["skipped"][0]["path"], "pipe", "{status}");
    assert_eq!(srv.get(&format!("/v1/workspaces/{ws}/status")), status);

    let diff = cli(&["diff", &one, &two]);
    let api = srv.get(&format!(
        "/v1/workspaces/{ws}/diff?from={one}&to={two}&hunks=false"
    ));
    assert_eq!(api, diff);
    assert!(diff["old"].as_str().unwrap().starts_with(&one), "{diff}");
    let renamed = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["status"] == "renamed")
        .unwrap_or_else(|| panic!("a rename: {diff}"));
    assert_eq!(renamed["old_path"], "b.txt");

    let with_hunks = cli(&["diff", "--hunks", &one, &two]);
    let api = srv.get(&format!("/v1/workspaces/{ws}/diff?from={one}&to={two}"));
    assert_eq!(api, with_hunks);
    assert!(with_hunks["files"][0]["hunks"].is_array(), "{with_hunks}");
    // A rename is taken whole (by path): it lists no hunk ids, none that revert would take.
    let renamed = with_hunks["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["status"] == "renamed")
        .unwrap_or_else(|| panic!("a rename: {with_hunks}"));
    assert!(
        renamed["insertions"] == 1 && renamed.get("hunks").is_none(),
        "{renamed}"
    );

    let live = cli(&["diff", &two, "live"]);
    let api = srv.get(&format!(
        "/v1/workspaces/{ws}/diff?from={two}&to=live&hunks=false"
    ));
    assert_eq!(api, live);
    assert!(
        live["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path_bytes"].is_string())
    );

    std::fs::remove_file(&fifo).unwrap();
    let id = env.ok(&["overlay", "create"]);
    let id = id.trim();
    env.ok(&[
        "overlay",
        "run",
        id,
        "--",
        "sh",
        "-c",
        "echo more >> a.txt; mkdir -p target; echo o > target/out",
    ]);
    let ov = cli(&["overlay", "diff", id]);
    assert_eq!(ov["ignored"][0], "target/out", "{ov}");
    assert_eq!(srv.get(&format!("/v1/overlays/{id}/diff")), ov);
}

/// The shape of a JSON value: its keys and the shapes under them (an array by its first
/// element), so two objects made from different states can be compared field by field.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => json!([a.first().map(shape)]),
        Value::Null => json!("null"),
        Value::Bool(_) => json!("bool"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
    }
}

/// The same object without its wall time.
fn timeless(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("seconds");
    }
    v
}

/// restore (a preview, a whole restore, one by hunk), undo and redo answer the same object
/// from the CLI's `--json` and the API.
#[test]
fn cli_and_api_answer_the_same_restore_and_undo() {
    let env = setup();
    let base = crate::common::snap(&env, "base again");
    env.write("a.txt", A_TXT.replace("two", "TWO").as_bytes());
    env.write("new.txt", b"new\n");
    crate::common::snap(&env, "edited");
    let srv = Server::start(&env);
    let ws = ws_id(&srv);

    let cli = crate::common::json(&env, &["restore", "--dry-run", &base]);
    let api = srv.post(
        &format!("/v1/workspaces/{ws}/restore"),
        json!({"rev": base, "dry_run": true}),
    );
    assert_eq!(timeless(api), timeless(cli.clone()));
    assert_eq!(cli["plan"].as_array().map(Vec::len), Some(2), "{cli}");

    let by_cli = crate::common::json(&env, &["restore", &base]);
    let undo_cli = crate::common::json(&env, &["undo"]);
    let by_api = srv.post(
        &format!("/v1/workspaces/{ws}/restore"),
        json!({"rev": base}),
    );
    assert_eq!(shape(&by_api), shape(&by_cli));
    assert_eq!(by_api["plan"], by_cli["plan"]);
    let undo_api = srv.post(&format!("/v1/workspaces/{ws}/undo"), json!({}));
    assert_eq!(shape(&undo_api), shape(&undo_cli));
    assert_eq!(undo_api["plan"], undo_cli["plan"]);
    let redo_api = srv.post(&format!("/v1/workspaces/{ws}/redo"), json!({}));
    let undo_again = crate::common::json(&env, &["undo"]);
    let redo_cli = crate::common::json(&env, &["redo"]);
    assert_eq!(shape(&redo_api), shape(&redo_cli));
    assert_eq!(redo_cli["redo"], true);
    assert_eq!(shape(&undo_again), shape(&undo_cli));

    // By hunk: the API's object is the CLI's `restore -p` object (the prompt needs a
    // terminal, so only the API is driven here; its shape is the whole restore's).
    env.write("a.txt", A_TXT.replace("nine", "NINE").as_bytes());
    let d = srv.get(&format!("/v1/workspaces/{ws}/diff?from=live&to={base}"));
    let hunk = d["files"][0]["hunks"][0]["id"]
        .as_str()
        .expect("a hunk")
        .to_string();
    let by_hunk = srv.post(
        &format!("/v1/workspaces/{ws}/restore"),
        json!({"rev": base, "hunks": [hunk]}),
    );
    assert_eq!(
        shape(&timeless(by_hunk.clone()))
            .as_object()
            .map(|m| m.len()),
        shape(&timeless(by_cli)).as_object().map(|m| m.len()),
        "{by_hunk}"
    );
    assert_eq!(by_hunk["edited"][0]["path"], "a.txt", "{by_hunk}");
}

/// Overlays: the list, one overlay, what create, accept and reject did, the same object from
/// the CLI's `--json` and the API.
#[test]
fn cli_and_api_answer_the_same_overlay_objects() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let created_cli = crate::common::json(
        &env,
        &["overlay", "create", "--backend", "copy", "--name", "c"],
    );
    let created_api = srv.post(
        &format!("/v1/workspaces/{ws}/overlays"),
        json!({"backend": "copy", "name": "a"}),
    );
    assert_eq!(shape(&created_api), shape(&created_cli));
    assert_eq!(created_cli["workspace_id"], ws);
    for name in ["c", "a"] {
        env.ok(&[
            "overlay",
            "run",
            name,
            "--",
            "sh",
            "-c",
            "echo x >> a.txt; echo y > y.txt; mkdir -p target; echo o > target/out",
        ]);
    }
    let list = crate::common::json(&env, &["overlay", "list"]);
    assert_eq!(srv.get("/v1/overlays"), list);
    assert_eq!(srv.get(&format!("/v1/workspaces/{ws}/overlays")), list);
    let one = srv.get(&format!("/v1/overlays/{}", created_cli["id"]));
    assert_eq!(
        list.as_array().unwrap().iter().find(|o| o["name"] == "c"),
        Some(&one)
    );

    let acc_cli = crate::common::json(&env, &["overlay", "accept", "c", "--", "a.txt"]);
    let rej_cli = crate::common::json(&env, &["overlay", "reject", "c", "--", "y.txt"]);
    let acc_api = srv.post("/v1/overlays/a/accept", json!({"paths": ["y.txt"]}));
    let rej_api = srv.post("/v1/overlays/a/reject", json!({"paths": ["a.txt"]}));
    assert_eq!(shape(&acc_api), shape(&acc_cli));
    assert_eq!(shape(&rej_api), shape(&rej_cli));
    assert_eq!(rej_api["rejected"], json!(["a.txt"]));
    assert_eq!(acc_cli["files"][0]["path"], "a.txt", "{acc_cli}");
}

/// The operation log: `op log --json` and the API's ops route list the same actions.
#[test]
fn cli_and_api_answer_the_same_op_log() {
    let env = setup();
    let base = crate::common::snap(&env, "again");
    env.write("a.txt", b"changed\n");
    crate::common::snap(&env, "changed");
    env.ok(&["restore", &base]);
    env.ok(&["undo"]);
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let cli = crate::common::json(&env, &["op", "log"]);
    assert_eq!(srv.get(&format!("/v1/workspaces/{ws}/ops")), cli);
    let restore = cli
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "restore")
        .unwrap_or_else(|| panic!("{cli}"));
    assert_eq!(restore["undone"], true, "{cli}");
    assert_eq!(restore["workspace_id"], ws);
}

/// Artifacts: `artifact ls --json` and the API's list are the same rows, and a put answers
/// the same object (the blob id is `id` in both).
#[test]
fn cli_and_api_answer_the_same_artifacts() {
    let env = setup();
    let file = env.tmp.path().join("blob");
    std::fs::write(&file, b"artifact bytes\n").unwrap();
    let put_cli = crate::common::json(
        &env,
        &[
            "artifact",
            "put",
            "k/cli",
            file.to_str().unwrap(),
            "--meta",
            "a=b",
        ],
    );
    let srv = Server::start(&env);
    let (s, put_api) = srv.put_bytes("/v1/artifacts/k/api?meta=a=b", b"other bytes\n");
    assert_eq!(s, 201, "{put_api}");
    assert_eq!(shape(&put_api), shape(&put_cli));
    assert_eq!(put_cli["meta"], json!({"a": "b"}));
    let ls = crate::common::json(&env, &["artifact", "ls"]);
    assert_eq!(srv.get("/v1/artifacts"), ls);
    assert_eq!(ls.as_array().map(Vec::len), Some(2), "{ls}");
    assert_eq!(ls[0]["id"], put_api["id"], "{ls}");
}

/// `tag --json` answers the row `tags --json` lists for it.
#[test]
fn a_tag_is_one_object() {
    let env = setup();
    let made = crate::common::json(&env, &["tag", "v1"]);
    let list = crate::common::json(&env, &["tags"]);
    assert_eq!(list, json!([made]));
    assert!(made["workspace"].is_string(), "{made}");
    let gone = crate::common::json(&env, &["tag", "-d", "v1"]);
    assert_eq!(gone, json!({"deleted": "v1"}));
}

/// The log and one snapshot: `log --json` (with and without a path) and `show --json` answer
/// what the API's snapshot list and snapshot route answer.
#[test]
fn cli_and_api_answer_the_same_log_and_show() {
    let env = setup();
    env.write("a.txt", b"changed\n");
    env.write("b.txt", b"bee\n");
    crate::common::snap(&env, "two");
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let log = crate::common::json(&env, &["log"]);
    assert_eq!(srv.get(&format!("/v1/workspaces/{ws}/snapshots")), log);
    let of_a = crate::common::json(&env, &["log", "--", "a.txt"]);
    assert_eq!(
        srv.get(&format!("/v1/workspaces/{ws}/snapshots?path=a.txt")),
        of_a
    );
    assert_eq!(of_a[0]["change"]["status"], "modified", "{of_a}");
    for rev in ["@", "@~1"] {
        let shown = crate::common::json(&env, &["show", rev]);
        assert_eq!(
            srv.get(&format!("/v1/workspaces/{ws}/snapshots/{rev}")),
            shown
        );
    }
    let shown = crate::common::json(&env, &["show", "@"]);
    assert_eq!(
        shown["changes"].as_array().map(Vec::len),
        Some(2),
        "{shown}"
    );
    assert!(shown["skipped"].is_array(), "{shown}");
}

impl Server {
    /// `POST path` with a patch as the body: (status, JSON body).
    fn post_patch(&self, path: &str, patch: &str) -> (u16, Value) {
        self.send_body("POST", path, "text/x-diff", patch.as_bytes())
    }
}

/// Every key of `v` (and of the objects under it), as `a.b` paths, sorted.
fn keys(v: &Value) -> Vec<String> {
    fn walk(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    let here = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    out.push(here.clone());
                    walk(v, &here, out);
                }
            }
            Value::Array(a) => {
                for v in a {
                    walk(v, &format!("{at}[]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out.sort();
    out.dedup();
    out
}

/// `apply --json` and the API's apply route answer one object: the same names (`check`,
/// `applied`, `resumed`), and per file where each hunk went.
#[test]
fn cli_and_api_answer_the_same_apply() {
    let env = setup();
    // The hunk's header is two lines off: it applies at offset +2.
    env.write("a.txt", format!("zero\nzero\n{A_TXT}").as_bytes());
    crate::common::snap(&env, "shifted");
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
    let file = env.tmp.path().join("p.diff");
    std::fs::write(&file, patch).unwrap();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);

    let cli = crate::common::json(&env, &["apply", "--check", file.to_str().unwrap()]);
    let (s, api) = srv.post_patch(&format!("/v1/workspaces/{ws}/apply?check=true"), patch);
    assert_eq!(s, 200, "{api}");
    assert_eq!(api, cli);
    assert_eq!(cli["files"][0]["hunks"][0]["offset"], 2, "{cli}");
    assert_eq!(cli["applied"], false, "{cli}");

    let by_cli = crate::common::json(&env, &["apply", file.to_str().unwrap()]);
    env.ok(&["undo"]);
    let (s, by_api) = srv.post_patch(&format!("/v1/workspaces/{ws}/apply"), patch);
    assert_eq!(s, 200, "{by_api}");
    assert_eq!(keys(&by_api), keys(&by_cli));
    assert_eq!(shape(&by_api), shape(&by_cli));
    assert_eq!(by_api["files"], by_cli["files"]);
    assert_eq!(by_api["applied"], true, "{by_api}");
    assert_eq!(by_api["files"][0]["path"], "a.txt", "{by_api}");
}

/// `snapshot --json` and the API's snapshot route answer one object: the snapshot as the log
/// lists it, and the scan's figures (`skipped` a list of paths in both).
#[test]
fn cli_and_api_answer_the_same_snapshot() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    env.write("a.txt", b"by the cli\n");
    let cli = crate::common::json(&env, &["snapshot", "-m", "cli", "--tag", "t1"]);
    env.write("a.txt", b"by the api\n");
    let (s, api) = srv.call(
        "POST",
        &format!("/v1/workspaces/{ws}/snapshots"),
        Some(json!({"message": "api", "tags": ["t2"]})),
    );
    assert_eq!(s, 201, "{api}");
    assert_eq!(keys(&api), keys(&cli));
    assert_eq!(shape(&timeless(api.clone())), shape(&timeless(cli.clone())));
    assert_eq!(cli["snapshot"]["message"], "cli", "{cli}");
    assert_eq!(cli["snapshot"]["tags"], json!(["t1"]), "{cli}");
    assert_eq!(api["snapshot"]["id"], api["id"], "{api}");
    assert!(api["skipped"].is_array(), "{api}");
    let log = srv.get(&format!("/v1/workspaces/{ws}/snapshots"));
    let mut listed = log[0].clone();
    let m = listed.as_object_mut().unwrap();
    m.retain(|k, _| api["snapshot"].get(k).is_some());
    assert_eq!(listed, api["snapshot"]);
}

/// `ls --json`'s rows are the API's tree entries: name, path, kind, size, id, and a
/// symlink's target.
#[cfg(unix)]
#[test]
fn cli_and_api_list_a_tree_alike() {
    let env = setup();
    env.write("sub/b.txt", b"bee\n");
    std::os::unix::fs::symlink("a.txt", env.path("link")).unwrap();
    crate::common::snap(&env, "more");
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let cli = crate::common::json(&env, &["ls", "@"]);
    let api = srv.get(&format!("/v1/workspaces/{ws}/tree/@"));
    assert_eq!(api["entries"], cli);
    let link = cli
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "link")
        .unwrap_or_else(|| panic!("{cli}"));
    assert_eq!(link["target"], "a.txt", "{cli}");
    let cli = crate::common::json(&env, &["ls", "@", "sub"]);
    let api = srv.get(&format!("/v1/workspaces/{ws}/tree/@?path=sub"));
    assert_eq!(api["entries"], cli);
    assert_eq!(cli[0]["path"], "sub/b.txt", "{cli}");
    assert_eq!(cli[0]["name"], "b.txt", "{cli}");
}

/// A run this server started reports its progress on the event stream as `run` events (the
/// run's own kind in `run_event`, its fields beside it), ending with `run_finished`; each is
/// a `ServerEvent` as the document describes it.
#[test]
fn a_runs_progress_is_typed_run_events() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let rx = events(&srv, &format!("workspace={ws}"), None);
    let v = srv.post(
        &format!("/v1/workspaces/{ws}/run"),
        json!({"command": ["sh", "-c", "echo x >> a.txt"], "wait": false}),
    );
    let run = v["run"].as_u64().unwrap_or_else(|| panic!("{v}"));
    let (_, started) = wait_for(
        &rx,
        "command_started",
        || {},
        |v| v["event"] == "run" && v["run_event"] == "command_started",
    );
    assert_eq!(started["run"], run, "{started}");
    assert!(started["pid"].is_u64(), "{started}");
    assert_eq!(started["workspace"], ws_path(&srv, ws), "{started}");
    let (_, done) = wait_for(
        &rx,
        "run_finished",
        || {},
        |v| v["event"] == "run" && v["run_event"] == "run_finished",
    );
    assert_eq!(done["run"], run, "{done}");
}

/// An event the stream cannot serialize is not lost silently: a `dropped` notice naming its
/// kind goes out in its place, a `ServerEvent` as the document describes it.
#[test]
fn a_dropped_event_is_a_server_event_the_document_describes() {
    use rewind::wire::{ServerEvent, ServerNotice};
    let lost = ServerEvent::Server(ServerNotice::Gap {
        missed: None,
        last_event_id: None,
        time_ns: 1,
    });
    let sent = ServerEvent::Server(ServerNotice::dropped(&lost, &"boom", 2));
    let v = serde_json::to_value(&sent).unwrap();
    assert_eq!(
        v,
        json!({"event": "dropped", "dropped_event": "gap", "error": "boom", "time_ns": 2})
    );
    assert_server_event(&v);
}

/// `init --json` and the API's `POST /v1/workspaces` answer one object: the workspace (as
/// the workspace list shows it), whether it was new, and the store.
#[test]
fn cli_and_api_register_a_workspace_alike() {
    let env = setup();
    let srv = Server::start(&env);
    let cli = crate::common::json(&env, &["init"]);
    let path = cli["path"].as_str().unwrap_or_else(|| panic!("{cli}"));
    let (s, api) = srv.call("POST", "/v1/workspaces", Some(json!({"path": path})));
    assert_eq!(s, 200, "{api}");
    assert_eq!(api, cli);
    assert_eq!(cli["newly_registered"], false, "{cli}");
    let listed = srv.get("/v1/workspaces")[0].clone();
    for (k, v) in listed.as_object().unwrap() {
        assert_eq!(&cli[k], v, "{k}: {cli}");
    }
}

/// A failure is one object from both: an unknown snapshot id answers the same `error`, `code`,
/// `kind`, `causes` and `hints` from `show --json` and from the API.
#[test]
fn cli_and_api_answer_the_same_error() {
    let env = setup();
    let srv = Server::start(&env);
    let ws = ws_id(&srv);
    let out = env
        .cmd()
        .args(["--json", "show", "ffffffff"])
        .output()
        .expect("spawn rewind");
    assert_eq!(out.status.code(), Some(2));
    let cli: Value = serde_json::from_slice(&out.stdout).expect("the error object");
    let (s, api) = srv.call(
        "GET",
        &format!("/v1/workspaces/{ws}/snapshots/ffffffff"),
        None,
    );
    assert_eq!(s, 404, "{api}");
    assert_eq!(api, cli);
    assert_eq!(cli["code"], "not_found", "{cli}");
    assert_eq!(cli["kind"], "not_found", "{cli}");
    assert!(
        cli["error"]
            .as_str()
            .is_some_and(|e| e.contains("ffffffff")),
        "{cli}"
    );
    assert_eq!(cli["causes"], json!([]), "{cli}");
    assert_eq!(cli["hints"], json!([]), "{cli}");
}
