//! A server's questions for the user (its elicitations and sampling requests, which a client
//! turns into dialogs) reach the client one at a time: the next waits for the answer to the
//! one before, and when too many of a server's questions wait already, the newest is declined
//! at once. A server cannot bury its user in dialogs, nor keep the gateway holding its requests
//! without end. Its requests for the client's roots, which reach no user, take turns the same
//! way among themselves.

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A server's questions put to the client or waiting to be, at most; more are declined.
pub const QUESTIONS_PER_SERVER: usize = 8;

/// Each server's turn to put a question to the user.
#[derive(Default)]
pub struct UserTurns {
    servers: std::cell::RefCell<HashMap<String, Rc<Gate>>>,
}

struct Gate {
    turn: Arc<Semaphore>,
    /// Questions holding the turn or waiting for it.
    queued: Cell<usize>,
}

/// The turn of one question: the next of its server's waits until this is dropped.
pub struct Turn {
    _permit: OwnedSemaphorePermit,
    _queued: Queued,
}

/// One question counted among its server's queued ones until dropped (answered, or given up
/// while it waited).
struct Queued(Rc<Gate>);

impl Drop for Queued {
    fn drop(&mut self) {
        self.0.queued.set(self.0.queued.get() - 1);
    }
}

impl UserTurns {
    /// Wait for `server`'s turn to put a question to the user; `None` at once when
    /// [`QUESTIONS_PER_SERVER`] of its questions are put or waiting already.
    pub async fn take(&self, server: &str) -> Option<Turn> {
        let gate = Rc::clone(
            self.servers
                .borrow_mut()
                .entry(server.to_owned())
                .or_insert_with(|| {
                    Rc::new(Gate {
                        turn: Arc::new(Semaphore::new(1)),
                        queued: Cell::new(0),
                    })
                }),
        );
        if gate.queued.get() >= QUESTIONS_PER_SERVER {
            return None;
        }
        gate.queued.set(gate.queued.get() + 1);
        let queued = Queued(Rc::clone(&gate));
        let permit = Arc::clone(&gate.turn).acquire_owned().await.ok()?;
        Some(Turn {
            _permit: permit,
            _queued: queued,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local<F: Future>(future: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&runtime, future)
    }

    #[test]
    fn questions_of_one_server_take_turns_and_too_many_are_declined() {
        local(async {
            let turns = Rc::new(UserTurns::default());
            let first = turns.take("noisy").await.expect("the first has its turn");
            // The next waits for the first to be answered…
            let second = {
                let turns = Rc::clone(&turns);
                tokio::task::spawn_local(async move { turns.take("noisy").await.is_some() })
            };
            tokio::task::yield_now().await;
            assert!(!second.is_finished(), "two questions of one server at once");
            // …while another server's question has its own turn.
            assert!(turns.take("quiet").await.is_some());
            // With the limit reached, one more is declined at once.
            let mut waiting = vec![];
            for _ in 2..QUESTIONS_PER_SERVER {
                let turns = Rc::clone(&turns);
                waiting.push(tokio::task::spawn_local(async move {
                    turns.take("noisy").await.is_some()
                }));
            }
            tokio::task::yield_now().await;
            assert!(turns.take("noisy").await.is_none());
            // Answered: the waiting ones have their turns, one after the other.
            drop(first);
            assert!(second.await.unwrap());
            for question in waiting {
                assert!(question.await.unwrap());
            }
            // Once they are all answered, a new one has its turn again.
            assert!(turns.take("noisy").await.is_some());
        });
    }

    #[test]
    fn a_question_given_up_while_it_waits_frees_its_place() {
        local(async {
            let turns = Rc::new(UserTurns::default());
            let first = turns.take("s").await.unwrap();
            for _ in 1..QUESTIONS_PER_SERVER {
                let turns = Rc::clone(&turns);
                let gave_up = tokio::task::spawn_local(async move { turns.take("s").await });
                tokio::task::yield_now().await;
                gave_up.abort();
                let _ = gave_up.await;
            }
            // None of them still counts: the server may ask again.
            let turns2 = Rc::clone(&turns);
            let next = tokio::task::spawn_local(async move { turns2.take("s").await.is_some() });
            tokio::task::yield_now().await;
            drop(first);
            assert!(next.await.unwrap());
        });
    }
}
