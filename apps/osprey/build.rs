//! Links `osprey` as a position-dependent executable (see the comment below).

fn main() {
    // Start-up: a position-independent executable makes the dynamic loader apply about
    // 31,000 relocations at every launch (writing half a megabyte of pointers, one
    // copy-on-write page fault per page), before `main` runs. Linked at a fixed address,
    // those pointers are final in the file.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
