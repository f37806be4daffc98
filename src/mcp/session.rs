//! One client's session: which request ids are in flight, and the order its tool calls
//! arrived in.
//!
//! Invariant: a request id is in flight from when its line is read until its response is
//! written, and a second request with that id meanwhile is refused without running; the
//! session's tool calls run one at a time, in the order their lines were read — a ticket
//! is taken as the line is read, before the protocol spawns a task for it, so the order
//! rmcp polls its tasks in does not matter. A request the client cancels gets no response
//! (rmcp drops it), so its id stays taken: MCP forbids reusing an id in a session anyway.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, RequestId};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The session's requests in flight and its tool calls' turns.
#[derive(Debug, Default)]
pub struct Session {
    state: Mutex<State>,
    turn_over: Notify,
}

#[derive(Debug, Default)]
struct State {
    in_flight: HashSet<RequestId>,
    /// The ticket of each tool call read but not yet started.
    tickets: HashMap<RequestId, u64>,
    /// The next ticket to hand out.
    issued: u64,
    /// The ticket whose turn it is.
    serving: u64,
    /// Tickets past `serving` that ended before their turn.
    ended: BTreeSet<u64>,
}

impl State {
    fn end(&mut self, ticket: u64) {
        if ticket != self.serving {
            self.ended.insert(ticket);
            return;
        }
        self.serving += 1;
        while self.ended.remove(&self.serving) {
            self.serving += 1;
        }
    }
}

/// A tool call's turn: held while it runs; the next call's turn comes when it drops.
#[derive(Debug)]
pub struct Turn {
    session: Arc<Session>,
    ticket: Option<u64>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket {
            self.session.state().end(ticket);
            self.session.turn_over.notify_waiters();
        }
    }
}

/// The members of a message the server writes that say whether it answers a request.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

impl Session {
    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere never leaves the state half-updated: every update is one step.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits a JSON line read from the client before the protocol sees it: a request's id
    /// is taken (and a tool call gets its ticket). The JSON-RPC error to answer instead
    /// when the id is already in flight, or when a `tools/call` has no valid params (which
    /// the protocol would answer as an unknown method).
    ///
    /// # Errors
    ///
    /// The reply to write instead of passing the line on; nothing was taken.
    pub fn admit(&self, text: &str) -> Result<(), Value> {
        let message = serde_json::from_str::<ClientJsonRpcMessage>(text);
        let Ok(ClientJsonRpcMessage::Request(request)) = message else {
            return Ok(());
        };
        let id = request.id;
        if let ClientRequest::CustomRequest(custom) = &request.request
            && custom.method == "tools/call"
        {
            return Err(invalid_params(&id, custom.params.as_ref()));
        }
        let mut state = self.state();
        if !state.in_flight.insert(id.clone()) {
            let message = format!(
                "Invalid Request: a request with id {} is already in flight",
                id.clone().into_json_value()
            );
            return Err(error(&id, -32600, &message));
        }
        if let ClientRequest::CallToolRequest(_) = request.request {
            let ticket = state.issued;
            state.issued += 1;
            state.tickets.insert(id, ticket);
        }
        Ok(())
    }

    /// Notes a line the server writes: a response frees its request's id (and the ticket
    /// of a tool call the protocol answered without running it).
    pub fn answered(&self, line: &str) {
        let Ok(Reply {
            id: Some(id),
            method: None,
        }) = serde_json::from_str(line)
        else {
            return;
        };
        let mut state = self.state();
        state.in_flight.remove(&id);
        if let Some(ticket) = state.tickets.remove(&id) {
            state.end(ticket);
            drop(state);
            self.turn_over.notify_waiters();
        }
    }

    /// Waits for the turn of the tool call `id`: every call read before it has ended. A call
    /// that was not admitted (none is, in process) runs at once.
    pub async fn turn(self: Arc<Session>, id: &RequestId) -> Turn {
        let ticket = self.state().tickets.remove(id);
        let turn = Turn {
            session: Arc::clone(&self),
            ticket,
        };
        if let Some(ticket) = ticket {
            loop {
                let notified = self.turn_over.notified();
                tokio::pin!(notified);
                // Registered before the check, so a turn ending in between is not missed.
                notified.as_mut().enable();
                if self.state().serving == ticket {
                    break;
                }
                notified.await;
            }
        }
        turn
    }
}

fn error(id: &RequestId, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.clone().into_json_value(),
           "error": {"code": code, "message": message}})
}

/// The invalid-params error of a `tools/call` whose params do not read as a call.
fn invalid_params(id: &RequestId, params: Option<&Value>) -> Value {
    let why = match params {
        None => "missing params".to_string(),
        Some(params) => match serde_json::from_value::<CallToolRequestParams>(params.clone()) {
            Err(e) => e.to_string(),
            Ok(_) => "params that do not read as a tool call".to_string(),
        },
    };
    let message = format!(
        "Invalid params: tools/call takes {{\"name\": string, \"arguments\": object}}: {why}"
    );
    error(id, -32602, &message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: u32) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "show", "arguments": {}}})
        .to_string()
    }

    #[tokio::test]
    async fn tool_calls_take_their_turns_in_the_order_they_were_read() {
        let session = Arc::new(Session::default());
        for id in 1..=3 {
            session.admit(&call(id)).unwrap();
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // Polled last to first: each still runs only after the one read before it.
        let mut tasks = Vec::new();
        for id in (1..=3).rev() {
            let (session, tx) = (Arc::clone(&session), tx.clone());
            tasks.push(tokio::spawn(async move {
                let turn = session.turn(&RequestId::Number(id)).await;
                tx.send(id).unwrap();
                drop(turn);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        drop(tx);
        let mut order = Vec::new();
        while let Some(id) = rx.recv().await {
            order.push(id);
        }
        assert_eq!(order, [1, 2, 3]);
    }

    #[tokio::test]
    async fn a_call_answered_without_running_does_not_hold_up_the_next() {
        let session = Arc::new(Session::default());
        session.admit(&call(1)).unwrap();
        session.admit(&call(2)).unwrap();
        session.answered(r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "m"}}"#);
        let turn = Arc::clone(&session).turn(&RequestId::Number(2)).await;
        assert_eq!(turn.ticket, Some(1));
    }

    #[test]
    fn an_id_in_flight_is_refused_until_it_is_answered() {
        let session = Session::default();
        session.admit(&call(7)).unwrap();
        let refused = session.admit(&call(7)).unwrap_err();
        assert_eq!(refused["id"], 7);
        assert_eq!(refused["error"]["code"], -32600);
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("id 7 is already in flight"), "{message}");
        // A string id is another id.
        let text = call(7).replace("\"id\":7", "\"id\":\"7\"");
        session.admit(&text).unwrap();
        session.answered(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        session.admit(&call(7)).unwrap();
    }

    #[test]
    fn a_tool_call_without_valid_params_is_invalid_params() {
        let session = Session::default();
        for text in [
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"show","arguments":"{}"}}"#,
        ] {
            let refused = session.admit(text).unwrap_err();
            assert_eq!(refused["id"], 4, "{text}");
            assert_eq!(refused["error"]["code"], -32602, "{text}: {refused}");
        }
        // Nothing was taken: the id is free.
        session.admit(&call(4)).unwrap();
    }
}
