//! The Plugboard desktop app's entry point.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    plugboard_app::choose_rendering();
    plugboard_app::run();
}
