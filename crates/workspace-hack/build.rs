//! Without a build script cargo would not apply the `[build-dependencies]` above, which give
//! build scripts and procedural macros one feature set too.

fn main() {}
