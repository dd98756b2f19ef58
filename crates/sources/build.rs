//! Embeds every `catalog/*.json` file into the binary as the default catalog.

use std::fmt::Write;
use std::path::Path;

fn main() {
    // Read at run time: `env!` would bake in the directory the build script was compiled in,
    // and a build directory copied from another checkout would embed that checkout's catalog.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest_dir).join("../../catalog");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the catalog/ directory exists")
        .map(|e| e.expect("readable catalog directory").path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name().is_some_and(|n| n != "catalog.schema.json")
        })
        .collect();
    files.sort();
    let mut out = String::from("pub(crate) static EMBEDDED: &[(&str, &str)] = &[\n");
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let target = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_catalog.rs");
    std::fs::write(target, out).unwrap();
}
