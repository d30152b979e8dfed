//! Guards that undo a fault: explicitly (`remove`, `restore`, `delete`, which report errors), or
//! on drop, when a test forgot or panicked (which can only print them).

use crate::{Error, Proxy, Result, ToxicState, Toxiproxy};

/// What a guard undoes.
#[derive(Clone, Debug)]
enum Undo {
    RemoveToxic { proxy: String, toxic: String },
    Enable { proxy: String },
    DeleteProxy { proxy: String },
}

impl Undo {
    /// Undoes it; a proxy or toxic already gone (a reset, a deleted proxy) counts as undone.
    async fn run(&self, client: &Toxiproxy) -> Result<()> {
        let done = match self {
            Undo::RemoveToxic { proxy, toxic } => client.remove_toxic(proxy, toxic).await,
            Undo::Enable { proxy } => client.set_enabled(proxy, true).await.map(drop),
            Undo::DeleteProxy { proxy } => client.delete_proxy(proxy).await,
        };
        match done {
            Err(err) if err.is_not_found() => Ok(()),
            other => other,
        }
    }

    /// Undoes it from synchronous code. Drop cannot await, and blocking on the caller's runtime
    /// from one of its threads panics, so a thread of its own runs a runtime and a client of
    /// its own (a pooled connection belongs to the runtime that opened it).
    fn run_blocking(&self, api_url: &str) -> Result<()> {
        let api_url = api_url.to_owned();
        let undo = self.clone();
        let thread = std::thread::Builder::new()
            .name("faultproxy-undo".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(Error::Undo)?;
                let client = Toxiproxy::new(&api_url)?;
                runtime.block_on(undo.run(&client))
            })
            .map_err(Error::Undo)?;
        thread
            .join()
            .unwrap_or_else(|_| Err(Error::Undo(std::io::Error::other("the undo thread panicked"))))
    }
}

/// An undo that runs once: on `disarm`, or else on drop.
#[derive(Debug)]
struct Armed {
    client: Toxiproxy,
    undo: Undo,
    armed: bool,
}

impl Armed {
    async fn disarm(mut self) -> Result<()> {
        self.armed = false;
        self.undo.run(&self.client).await
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        if self.armed
            && let Err(err) = self.undo.run_blocking(self.client.api_url())
        {
            eprintln!("faultproxy: {:?} was not undone on drop: {err}", self.undo);
        }
    }
}

/// A toxic on a proxy, removed by [`ToxicGuard::remove`] or on drop.
#[derive(Debug)]
pub struct ToxicGuard {
    armed: Armed,
    proxy: String,
    state: ToxicState,
}

impl ToxicGuard {
    pub(crate) fn new(client: Toxiproxy, proxy: String, state: ToxicState) -> Self {
        let undo = Undo::RemoveToxic {
            proxy: proxy.clone(),
            toxic: state.name.clone(),
        };
        Self {
            armed: Armed {
                client,
                undo,
                armed: true,
            },
            proxy,
            state,
        }
    }

    /// The toxic as Toxiproxy accepted it.
    pub fn state(&self) -> &ToxicState {
        &self.state
    }

    /// The proxy it is on.
    pub fn proxy(&self) -> &str {
        &self.proxy
    }

    /// Removes the toxic now (the connections it held back flow again, unless it dropped their
    /// data).
    pub async fn remove(self) -> Result<()> {
        self.armed.disarm().await
    }
}

/// A disabled proxy, enabled again by [`CutGuard::restore`] or on drop.
#[derive(Debug)]
pub struct CutGuard {
    armed: Armed,
}

impl CutGuard {
    pub(crate) fn new(client: Toxiproxy, proxy: String) -> Self {
        Self {
            armed: Armed {
                client,
                undo: Undo::Enable { proxy },
                armed: true,
            },
        }
    }

    /// Enables the proxy again: new connections are accepted (the cut ones stay closed).
    pub async fn restore(self) -> Result<()> {
        self.armed.disarm().await
    }
}

/// A proxy a test created, deleted by [`ProxyGuard::delete`] or on drop.
#[derive(Debug)]
pub struct ProxyGuard {
    armed: Armed,
    proxy: Proxy,
}

impl ProxyGuard {
    pub(crate) fn new(client: Toxiproxy, proxy: Proxy) -> Self {
        let undo = Undo::DeleteProxy {
            proxy: proxy.name.clone(),
        };
        Self {
            armed: Armed {
                client,
                undo,
                armed: true,
            },
            proxy,
        }
    }

    /// The proxy as Toxiproxy created it.
    pub fn proxy(&self) -> &Proxy {
        &self.proxy
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.proxy.name
    }

    /// `host:port` it listens on.
    pub fn listen(&self) -> &str {
        &self.proxy.listen
    }

    /// Deletes the proxy now, closing its connections.
    pub async fn delete(self) -> Result<()> {
        self.armed.disarm().await
    }
}
