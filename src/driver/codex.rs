//! Codex as a process agent: `codex exec --json` in the run directory, with its model
//! endpoint, its tools and its sandbox set on the command line, and its accounting read
//! from its JSONL events.
//!
//! * **Model.** With `OPENAI_BASE_URL` in the agent's environment (the battery sets it from
//!   `--model-endpoint`; `case investigate` passes the engine's own), Codex gets a model
//!   provider of its own, `anvil`, speaking the Responses API at that URL (`/v1` appended
//!   when the URL has no path, so `replay-model`'s listening URL works as printed), with its
//!   key from `OPENAI_API_KEY` when that is set. Without it Codex keeps its own provider and
//!   login. `--model` is passed through; against the replay model use a model Codex does not
//!   know (the battery passes `replay`), since Codex drives the models it knows in code mode,
//!   through one JavaScript `exec` tool a scripted player cannot play.
//! * **Tools.** With [`ClaudeTools::Mcp`] the `anvil` MCP server (`anvil-bench mcp serve`) is
//!   configured as `mcp_servers.anvil`: the rails and the query operations are tools. Codex
//!   keeps its shell either way — it has no other way to write output/proposal.json — and
//!   with [`ClaudeTools::Bash`] the shell (grep and `anvil-bench case …`) is all it has.
//! * **Sandbox.** Under bubblewrap ours contains Codex and everything it starts (repository
//!   and run root read-only, only workspace/ and output/ writable, the labels not mounted,
//!   no network but the model bridge), so Codex's own is off (`--sandbox
//!   danger-full-access`): nested inside ours it could only restrict what ours already
//!   restricts, and the guarantees attested are ours alone. Natively Codex keeps its own
//!   (`--sandbox workspace-write` without its /tmp and `$TMPDIR` exceptions: its shell
//!   writes only under the run directory, offline) as the only containment there is; the
//!   engine cannot verify it, so the native attestation still lists every guarantee as
//!   unenforced. Its `TMPDIR` is `workspace/.tmp`, inside the run.
//! * **Configuration** is the command line's alone: `--ignore-user-config` and
//!   `--ignore-rules` (a user's `config.toml` and command rules never change a measured run;
//!   a login under `CODEX_HOME` still applies), `--ephemeral` (no session files), analytics
//!   and update checks off.
//!
//! Codex prints no cost: the cost is its token counts priced at [`DEFAULT_PRICE`], or at
//! `ANVIL_CODEX_USD_PER_MTOK=INPUT,CACHED,OUTPUT` (USD per million tokens) when set.
//!
//! Invariant: like every process driver, this only says what to run; it reads nothing of
//! the run but CASE.md.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::mcp_wiring;
use super::process_agent::{
    Accounting, AgentCommand, ClaudeTools, ExecutionPolicy, ModelApi, ProcessAgent, brief,
};
use super::usage::TokenPrice;
use crate::case::Run;
use crate::sandbox::Backend;

/// The variable that names the model endpoint; its presence configures the provider.
pub const BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// The variable holding the endpoint's key.
pub const API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The variable that overrides [`DEFAULT_PRICE`].
pub const PRICE_ENV: &str = "ANVIL_CODEX_USD_PER_MTOK";
/// Codex's `TMPDIR`, relative to the run directory.
pub const TMP_DIR: &str = "workspace/.tmp";
/// The provider name Codex is given for the endpoint.
pub const PROVIDER: &str = "anvil";
/// OpenAI's published GPT-5 rates when this was written (USD per million tokens: input,
/// cached input, output); Codex's own default model may be priced otherwise.
#[allow(clippy::doc_markdown)] // "OpenAI" is the vendor's name, not code to backtick.
pub const DEFAULT_PRICE: TokenPrice = TokenPrice {
    input: 1.25,
    cached_input: 0.125,
    output: 10.0,
};

/// Codex, as `codex exec --json` in the run directory.
#[derive(Debug, Clone, Default)]
pub struct CodexDriver {
    pub tools: ClaudeTools,
}

/// A string as a TOML basic string (JSON's escapes are TOML's).
fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// `base_url` of the provider: the URL as given, with `/v1` when it has no path.
#[must_use]
pub fn provider_base_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('/'))
        .map_or("", |(_, path)| path);
    if path.is_empty() {
        format!("{url}/v1")
    } else {
        url.to_string()
    }
}

fn ambient<'a>(policy: &'a ExecutionPolicy, name: &str) -> Option<&'a str> {
    policy
        .ambient
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

impl CodexDriver {
    /// The price of its tokens under `policy`.
    #[must_use]
    pub fn price(policy: &ExecutionPolicy) -> TokenPrice {
        match ambient(policy, PRICE_ENV) {
            Some(text) => TokenPrice::parse(text).unwrap_or_else(|| {
                tracing::warn!(
                    "{PRICE_ENV}=`{text}` is not INPUT,CACHED,OUTPUT in USD per million tokens; pricing at the default"
                );
                DEFAULT_PRICE
            }),
            None => DEFAULT_PRICE,
        }
    }
}

impl ProcessAgent for CodexDriver {
    fn name(&self) -> String {
        "codex".into()
    }

    fn model_api(&self) -> ModelApi {
        ModelApi::OpenAi
    }

    fn command(&self, run: &Run, policy: &ExecutionPolicy) -> AgentCommand {
        let mut args: Vec<String> = [
            "exec",
            "--json",
            "--color",
            "never",
            "--skip-git-repo-check",
            "--ephemeral",
            "--ignore-user-config",
            "--ignore-rules",
            "--cd",
        ]
        .map(String::from)
        .to_vec();
        args.push(run.dir.display().to_string());
        let mut config = vec![
            "analytics.enabled=false".to_string(),
            "check_for_update_on_startup=false".into(),
        ];
        match policy.backend {
            Backend::Bubblewrap => args.extend(["--sandbox".into(), "danger-full-access".into()]),
            Backend::Native { .. } => {
                args.extend(["--sandbox".into(), "workspace-write".into()]);
                // Codex's workspace-write also opens /tmp and $TMPDIR, where a battery's
                // repository copy lives: only the run directory stays writable.
                config.push("sandbox_workspace_write.exclude_slash_tmp=true".into());
                config.push("sandbox_workspace_write.exclude_tmpdir_env_var=true".into());
            }
        }
        if let Some(url) = ambient(policy, BASE_URL_ENV) {
            let p = format!("model_providers.{PROVIDER}");
            config.push(format!("model_provider={}", toml_str(PROVIDER)));
            config.push(format!(
                "{p}.name={}",
                toml_str("anvil-bench model endpoint")
            ));
            config.push(format!(
                "{p}.base_url={}",
                toml_str(&provider_base_url(url))
            ));
            config.push(format!("{p}.wire_api={}", toml_str("responses")));
            if ambient(policy, API_KEY_ENV).is_some() {
                config.push(format!("{p}.env_key={}", toml_str(API_KEY_ENV)));
            }
        }
        let mut prompt = brief(run);
        if self.tools == ClaudeTools::Mcp {
            let server = mcp_wiring::server(run, policy);
            let s = format!("mcp_servers.{}", mcp_wiring::SERVER_NAME);
            let list: Vec<String> = server.args.iter().map(|a| toml_str(a)).collect();
            let env: Vec<String> = server
                .env
                .iter()
                .map(|(k, v)| format!("{} = {}", toml_str(k), toml_str(v)))
                .collect();
            config.push(format!("{s}.command={}", toml_str(&server.command)));
            config.push(format!("{s}.args=[{}]", list.join(", ")));
            config.push(format!("{s}.env={{ {} }}", env.join(", ")));
            prompt.push_str(&mcp_wiring::codex_mcp_brief());
        }
        for c in config {
            args.extend(["-c".into(), c]);
        }
        if let Some(model) = &policy.model {
            args.extend(["--model".into(), model.clone()]);
        }
        // The prompt goes last, after `--` so a brief never reads as a flag.
        args.extend(["--".into(), prompt]);
        // A temporary directory inside the run: Codex refuses to set up its sandbox helper
        // when its home is under the temporary directory, as a run under /tmp is.
        let tmp = run.dir.join(TMP_DIR);
        let set = BTreeMap::from([("TMPDIR".to_string(), tmp.display().to_string())]);
        AgentCommand {
            program: "codex".into(),
            args,
            allow: vec!["OPENAI_*".into(), "CODEX_*".into()],
            set,
            install_hint: Some("npm i -g @openai/codex".into()),
            files: vec![(PathBuf::from(TMP_DIR).join(".keep"), String::new())],
        }
    }

    fn accounting(&self, policy: &ExecutionPolicy) -> Accounting {
        Accounting::CodexJsonl(Self::price(policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provider_url_gets_v1_only_when_it_has_no_path() {
        assert_eq!(
            provider_base_url("http://127.0.0.1:4000"),
            "http://127.0.0.1:4000/v1"
        );
        assert_eq!(
            provider_base_url("http://127.0.0.1:4000/"),
            "http://127.0.0.1:4000/v1"
        );
        assert_eq!(
            provider_base_url("https://gw.example/openai/v1"),
            "https://gw.example/openai/v1"
        );
    }

    #[test]
    fn strings_are_quoted_for_toml() {
        assert_eq!(toml_str("a\"b\\c"), r#""a\"b\\c""#);
    }
}
