//! Every version of one PtahSchema, recorded losslessly by a raw watch from an exact
//! resourceVersion: no informer, no relist. A state the manager passes through in a moment (a
//! proof owed and claimed in the next write) is asserted from the record, not raced by a poll.
//! When the server ends the watch (its timeout) it resumes from the last resourceVersion
//! delivered; a 410 Gone (the history compacted past that point) fails the scenario instead of
//! relisting over a gap.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures_util::StreamExt;
use kube::{
    Api, ResourceExt,
    api::{WatchEvent, WatchParams},
};
use ptah_api::PtahSchema;

/// The recorded versions of one PtahSchema, in the order the server wrote them.
pub struct History {
    name: String,
    seen: Arc<Mutex<Vec<PtahSchema>>>,
    task: tokio::task::JoinHandle<()>,
}

impl History {
    /// Records every version of `name` written after resourceVersion `from`, until dropped.
    pub fn watch(api: Api<PtahSchema>, name: &str, from: String) -> History {
        let seen: Arc<Mutex<Vec<PtahSchema>>> = Arc::default();
        let params = WatchParams::default()
            .fields(&format!("metadata.name={name}"))
            .timeout(60);
        let record = seen.clone();
        let task = tokio::spawn(async move {
            let mut from = from;
            loop {
                let stream = match api.watch(&params, &from).await {
                    Ok(s) => s,
                    Err(kube::Error::Api(status)) if status.code == 410 => {
                        panic!("the watch from {from} is gone (410): a gap, not relisted over")
                    }
                    Err(e) => {
                        // A transport error before any event: the same resourceVersion again.
                        eprintln!("watch from {from}: {e}; again");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                };
                let mut stream = Box::pin(stream);
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(WatchEvent::Added(s) | WatchEvent::Modified(s) | WatchEvent::Deleted(s)) => {
                            from = s.resource_version().expect("a resourceVersion");
                            record.lock().expect("history").push(s);
                        }
                        Ok(WatchEvent::Bookmark(b)) => from = b.metadata.resource_version,
                        Ok(WatchEvent::Error(status)) if status.code == 410 => {
                            panic!("the watch from {from} is gone (410): a gap, not relisted over")
                        }
                        Ok(WatchEvent::Error(status)) => panic!("the watch failed: {status:?}"),
                        // A broken stream resumes from the last event it delivered.
                        Err(e) => {
                            eprintln!("watch stream from {from}: {e}; resuming");
                            break;
                        }
                    }
                }
            }
        });
        History {
            name: name.to_owned(),
            seen,
            task,
        }
    }

    /// Every version recorded so far.
    pub fn versions(&self) -> Vec<PtahSchema> {
        self.seen.lock().expect("history").clone()
    }

    /// The first recorded version that satisfies `pred`, waiting up to `within` for it.
    pub async fn seen(&self, what: &str, within: Duration, pred: impl Fn(&PtahSchema) -> bool) -> PtahSchema {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.seen.lock().expect("history").iter().find(|s| pred(s)) {
                return s.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "{} never showed {what} within {within:?}; every version:\n{}",
                    self.name,
                    self.versions()
                        .iter()
                        .map(|s| format!(
                            "{}: {}",
                            s.resource_version().unwrap_or_default(),
                            crate::lifecycle::summary(s)
                        ))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the watch has delivered resourceVersion `version`.
    pub async fn caught_up(&self, version: &str) {
        self.seen(
            &format!("resourceVersion {version}"),
            Duration::from_secs(30),
            |s| s.resource_version().as_deref() == Some(version),
        )
        .await;
    }
}

impl Drop for History {
    fn drop(&mut self) {
        self.task.abort();
    }
}
