//! A hello-world Tauri window: the floor of any Tauri app's memory here (bench/run).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .expect("the floor app runs");
}
