//! Build script: Tauri's codegen, with the app's commands listed so each one gets an
//! `allow-<command>` permission and only the capabilities that grant it can call it.

include!("src/command_names.rs");

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build script");
}
