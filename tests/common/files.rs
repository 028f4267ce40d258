//! Folders of a test run under the system's temporary folder: never the checkout's `data/`,
//! never another test's.

use std::path::PathBuf;

/// A fresh, empty folder of its own, named after `label`.
pub fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "storegate-{label}-{}-{}",
        std::process::id(),
        storegate::auth::oauth::store::random_hex32()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A folder of a test run, removed when dropped (with the gateway or tool that used it).
pub struct DataDir(pub PathBuf);

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An OAuth store's folder for one gateway of this test run (not yet made): not the
/// checkout's `data/`, which a test run would otherwise leave behind and share with every
/// other run, and not another test's either: the store keeps customer revocations, which a
/// gateway loads at start and every few seconds, so a test deleting customer 1 would sign
/// out another test's customer 1.
pub fn test_data_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "storegate-tests-{}/{}",
        std::process::id(),
        storegate::auth::oauth::store::random_hex32()
    ))
}
