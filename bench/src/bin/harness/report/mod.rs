//! What the harness makes of its rows: the ratios between clients, the printed table, and the
//! JSON results file.

pub mod json;
pub mod ratios;
pub mod table;
