//! A folder of cassettes: what replay looks answers up in (held in memory) and what a
//! recording appends to (each exchange is on disk before its answer goes on, so the folder
//! is complete whenever the gateway stops, however it stops).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::cassette::{self, Cassette, FORMAT_VERSION, Interaction, Request, Response};
use super::matching::Ignore;
use super::wires::Wires;

#[derive(Debug)]
pub struct Library {
    dir: PathBuf,
    /// The stores whose exchanges it holds (file names, endpoints).
    wires: Wires,
    /// Replay reads answers from memory; a recording only writes, and keeps nothing.
    replaying: bool,
    state: Mutex<State>,
    /// Files that did not parse, each message naming the file and the place: left out,
    /// the others still served.
    broken: Vec<String>,
}

/// A recorded interaction that matched, and where it is.
#[derive(Debug, Clone)]
pub struct Found {
    /// The file, relative to the folder.
    pub file: PathBuf,
    /// Its place in the file, from 0.
    pub index: usize,
    pub interaction: Interaction,
}

/// A recorded interaction replay never served.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unused {
    pub cassette: String,
    pub index: usize,
    pub request: String,
}

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<PathBuf, Cassette>,
    /// Per file, which interactions replay has served already.
    used: BTreeMap<PathBuf, Vec<bool>>,
}

impl Library {
    /// The cassettes under `dir` (none yet if it does not exist).
    /// A file that does not parse is left out, named in [`Library::broken`] and in the log.
    pub fn open(dir: &Path, wires: Wires) -> Result<Library, String> {
        let (files, broken) = cassette::load_dir_lenient(dir)?;
        for error in &broken {
            tracing::error!(cassettes = %dir.display(), "{error}; its answers are not replayed, the other files' are");
        }
        let used = files
            .iter()
            .map(|(path, c)| (path.clone(), vec![false; c.interactions.len()]))
            .collect();
        Ok(Library {
            dir: dir.to_path_buf(),
            wires,
            replaying: true,
            state: Mutex::new(State { files, used }),
            broken,
        })
    }

    /// What was wrong with the files left out.
    pub fn broken(&self) -> &[String] {
        &self.broken
    }

    /// A folder to record into: appends only, nothing held in memory (a recording gateway
    /// may run for hours).
    pub fn for_recording(dir: &Path, wires: Wires) -> Result<Library, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the cassette folder {}: {e}", dir.display()))?;
        Ok(Library {
            dir: dir.to_path_buf(),
            wires,
            replaying: false,
            state: Mutex::new(State::default()),
            broken: Vec::new(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many interactions the folder holds.
    pub fn len(&self) -> usize {
        self.state()
            .files
            .values()
            .map(|c| c.interactions.len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The answer to `wanted`: the first recorded match not served yet, else the last match
    /// again (a cache refresh asks more often than the recording did). `Err` describes
    /// the closest recorded request.
    pub fn answer(&self, wanted: &Request, ignore: &Ignore) -> Result<Response, String> {
        self.find(wanted, ignore)
            .map(|found| found.interaction.response)
    }

    /// The same as [`Library::answer`], with the whole interaction and where it sits.
    pub fn find(&self, wanted: &Request, ignore: &Ignore) -> Result<Found, String> {
        let mut state = self.state();
        let mut last = None;
        let mut first_unused = None;
        for (path, cassette) in &state.files {
            for (i, interaction) in cassette.interactions.iter().enumerate() {
                if ignore.matches(wanted, &interaction.request) {
                    last = Some((path.clone(), i));
                    if first_unused.is_none() && !state.used[path][i] {
                        first_unused = Some((path.clone(), i));
                    }
                }
            }
        }
        match first_unused.or(last) {
            Some((path, i)) => {
                if let Some(flag) = state.used.get_mut(&path).and_then(|u| u.get_mut(i)) {
                    *flag = true;
                }
                let interaction = state.files[&path].interactions[i].clone();
                Ok(Found {
                    file: path,
                    index: i,
                    interaction,
                })
            }
            None => Err(ignore.closest(
                wanted,
                state
                    .files
                    .values()
                    .flat_map(|c| c.interactions.iter().map(|i| &i.request)),
            )),
        }
    }

    /// Puts `interaction` in place of the one at `index` of `file` (an answer recorded
    /// again), on disk and in memory. Blocking: call it from a blocking thread.
    pub fn replace(
        &self,
        file: &Path,
        index: usize,
        interaction: Interaction,
    ) -> Result<(), String> {
        let mut state = self.state();
        let Some(cassette) = state.files.get_mut(file) else {
            return Err(format!("no cassette {}", file.display()));
        };
        let Some(slot) = cassette.interactions.get_mut(index) else {
            return Err(format!("{} has no interaction {index}", file.display()));
        };
        *slot = interaction;
        cassette::write(&self.dir.join(file), cassette)
    }

    /// Forgets which interactions were served: repeated requests replay from the first
    /// again (the control API's reset).
    pub fn reset_used(&self) {
        for flags in self.state().used.values_mut() {
            flags.iter_mut().for_each(|f| *f = false);
        }
    }

    /// Every interaction replay has not served, in file order.
    pub fn unused(&self) -> Vec<Unused> {
        let state = self.state();
        let mut out = Vec::new();
        for (path, cassette) in &state.files {
            for (i, interaction) in cassette.interactions.iter().enumerate() {
                if !state.used[path].get(i).copied().unwrap_or(false) {
                    out.push(Unused {
                        cassette: path.display().to_string(),
                        index: i,
                        request: interaction.request.describe(),
                    });
                }
            }
        }
        out
    }

    /// Adds an interaction at the end of its endpoint's file; `served`: replay counts it as
    /// answered already. Blocking: call it from a blocking thread.
    pub fn append(&self, interaction: Interaction, served: bool) -> Result<(), String> {
        let request = &interaction.request;
        let name = PathBuf::from(self.wires.file_name(&request.method, &request.path));
        let endpoint = self.wires.endpoint(&request.method, &request.path);
        // Written under the lock: two appends to one file must not interleave.
        let mut state = self.state();
        cassette::append(&self.dir.join(&name), &endpoint, &interaction)?;
        if self.replaying {
            state
                .files
                .entry(name.clone())
                .or_insert_with(|| Cassette {
                    storegate_cassette: FORMAT_VERSION,
                    endpoint,
                    interactions: Vec::new(),
                })
                .interactions
                .push(interaction);
            state.used.entry(name).or_default().push(served);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::recording::cassette::tests::WIRES;
    use serde_json::json;

    fn exchange(path: &str, answer: serde_json::Value) -> Interaction {
        crate::backend::recording::cassette::tests::exchange(path, answer, 0)
    }

    #[test]
    fn repeated_requests_replay_in_order_then_the_last_again() {
        let dir = std::env::temp_dir().join(format!("storegate-library-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let recording = Library::open(&dir, WIRES).unwrap();
        for n in 1..=2 {
            recording
                .append(exchange("/shop/api/products/A", json!({"n": n})), false)
                .unwrap();
        }
        recording
            .append(exchange("/shop/api/orders", json!({"items": []})), false)
            .unwrap();
        // What was written is what a new run reads.
        let replay = Library::open(&dir, WIRES).unwrap();
        assert_eq!(replay.len(), 3);
        let wanted = exchange("/shop/api/products/A", json!(null)).request;
        let ignore = Ignore::default();
        let answers: Vec<_> = (0..3)
            .map(|_| replay.answer(&wanted, &ignore).unwrap().body.body.unwrap())
            .collect();
        assert_eq!(answers, [json!({"n": 1}), json!({"n": 2}), json!({"n": 2})]);
        let miss = exchange("/shop/api/products/B", json!(null)).request;
        assert_eq!(
            replay.answer(&miss, &ignore).unwrap_err(),
            "closest recorded: GET /shop/api/products/A (differs in path)"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
