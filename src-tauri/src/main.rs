//! The Plugboard desktop app's entry point.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    plugboard_base::heap::tune_for_a_long_running_process();
    plugboard_app::choose_rendering();
    plugboard_app::run();
}
