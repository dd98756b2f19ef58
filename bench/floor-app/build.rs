//! Tauri's codegen for the floor app.
fn main() {
    tauri_build::build();
}
