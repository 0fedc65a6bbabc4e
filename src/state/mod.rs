//! State under `.git/phasegate/` (the common git directory, so linked
//! worktrees share it): run directories with logs, invocation records and
//! verdicts; `state.json` with the run history; the intervention queue and
//! `emergency.log`. Everything written here is written atomically under
//! the state lock.

mod interventions;
mod lock;
mod run_dir;
mod store;

pub use interventions::*;
pub use lock::*;
pub use run_dir::*;
pub use store::*;

use std::path::{Path, PathBuf};

/// The state directory: `<common git dir>/phasegate`, or a per-directory
/// folder under the system's temporary directory outside a repository.
pub fn state_dir(common_dir: Option<&Path>, root: &Path, temp_dir: &Path) -> PathBuf {
    match common_dir {
        Some(git) => git.join("phasegate"),
        None => {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            root.hash(&mut hasher);
            temp_dir.join(format!("phasegate-{:016x}", hasher.finish()))
        }
    }
}
