//! Checks the other crates' tests share. Only a dev-dependency: nothing that ships carries
//! them.

pub mod unicode_check;
