//! The process's allocator: mimalloc, called the way its C interface serves small and
//! medium blocks fastest.
//!
//! mimalloc instead of the system allocator: a cache hit is a handful of small allocations,
//! and with glibc's malloc they were a sixth of the hit path's CPU time (bench/RESULTS.md,
//! docs/decisions/resilience-and-cache.md).
//!
//! Not `mimalloc::MiMalloc` itself: that type hands every allocation to
//! `mi_malloc_aligned` with the layout's alignment, and mimalloc v3 takes its fast path for
//! an aligned request only up to 1 KiB. A larger block whose size is not a power of two
//! (a response's header map with room for sixteen fields, hyper's arrays for a head's 200
//! fields) goes to over-allocation instead: alignment added to the size, the pointer moved
//! up, and `mi_free` moving it back. Four of those a cache hit, with their frees about a
//! twentieth of its instructions (`bench/instructions.py`). Every mimalloc block is a whole
//! number of 8-byte words from an aligned page start, so an alignment of at most 8 (nearly
//! every Rust allocation) needs none of that: those go to `mi_malloc`, `mi_zalloc` and
//! `mi_realloc`; a larger alignment to the aligned calls, as before.
//!
//! **Small pages only** ([`keep_pages_small`]): mimalloc asks the kernel for transparent huge
//! pages on its arenas, and a 2 MiB page stays resident whole while any byte of it is in use;
//! the kernel's `khugepaged` also fills the holes mimalloc gave back into huge pages again.
//! Under a steady load that made the resident size creep up with the live heap flat (issue
//! 32's soak: 114 of 147 MiB resident were huge pages). The binary turns them off for itself
//! at start.
//!
//! Left out of fuzz builds, where the sanitizer's allocator must see every allocation.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment every mimalloc block has whatever its size.
const WORD: usize = 8;

/// mimalloc, with the plain calls for what they already align ([module docs](self)).
pub struct Allocator;

// SAFETY: every call is mimalloc's, for a block mimalloc allocated; `mi_malloc`,
// `mi_zalloc` and `mi_realloc` return blocks aligned to `WORD`, so they are used only for
// layouts that ask for no more; everything else goes to the calls that take the alignment.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment; `Layout` guarantees a power-of-two alignment.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from one of the calls above: `mi_free` takes any of them.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `alloc`; the block keeps the alignment it was allocated with.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

/// Gives the memory this thread freed back to the operating system now, rather than after
/// mimalloc's purge delay. For the rare moments that just freed megabytes (an image upload):
/// without it, ten parallel 15 MB uploads left the process at 220 MB resident, most of it
/// freed buffers (docs/decisions/hostile-clients.md). Too costly for the request path.
pub fn give_back_freed_memory() {
    // SAFETY: `mi_collect` only walks mimalloc's own structures for the calling thread.
    #[cfg(not(fuzzing))]
    unsafe {
        mi::mi_collect(true)
    }
}

/// Turns transparent huge pages off for this process (and what it starts), unless the
/// operator asked mimalloc for them (`MIMALLOC_ALLOW_THP` set): memory freed is then given
/// back in 4 KiB pages, and the kernel does not collapse what is left into 2 MiB ones
/// ([module docs](self), docs/benchmarks.md's soak). Call first thing in `main`: pages
/// faulted in before stay as they are. Linux only; elsewhere nothing to do.
pub fn keep_pages_small() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
        return;
    }
    // The process's flag wins over mimalloc's `madvise(MADV_HUGEPAGE)` on its arenas.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE sets a flag of this process; it reads no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size class up to a few pages, and alignments on both sides of the
    /// word: each comes back aligned as asked, holds what was written, and grows and
    /// shrinks with its bytes kept.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let allocator = Allocator;
        for align in [1, 2, 4, 8, 16, 64, 4096] {
            for size in (1..40).chain([100, 1000, 1024, 1500, 1664, 4096, 5000, 70_000]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is freed once, with its layout.
                unsafe {
                    let p = allocator.alloc(layout);
                    assert!(
                        !p.is_null() && (p as usize).is_multiple_of(align),
                        "{size} {align}"
                    );
                    std::ptr::write_bytes(p, 0xa5, size);
                    let grown = allocator.realloc(p, layout, size * 3);
                    assert!(
                        (grown as usize).is_multiple_of(align),
                        "{size} {align} grown"
                    );
                    assert!((0..size).all(|i| *grown.add(i) == 0xa5), "{size} {align}");
                    let grown_layout = Layout::from_size_align(size * 3, align).unwrap();
                    let shrunk = allocator.realloc(grown, grown_layout, size);
                    assert!(
                        (shrunk as usize).is_multiple_of(align),
                        "{size} {align} shrunk"
                    );
                    assert!((0..size).all(|i| *shrunk.add(i) == 0xa5), "{size} {align}");
                    allocator.dealloc(shrunk, layout);
                    let zeroed = allocator.alloc_zeroed(layout);
                    assert!(
                        (zeroed as usize).is_multiple_of(align),
                        "{size} {align} zeroed"
                    );
                    assert!((0..size).all(|i| *zeroed.add(i) == 0), "{size} {align}");
                    allocator.dealloc(zeroed, layout);
                }
            }
        }
    }
}
