//! The back-end port: what the gateway asks of a store, in the gateway's own terms.
//!
//! One small trait per area, each method a question or a command of the API's own
//! (a product, a customer's addresses, an order's comments, a sign-in):
//!
//! | trait | area |
//! |---|---|
//! | [`StoreSetup`] | store views, configs, directory, websites, categories; health |
//! | [`Catalog`], [`ProductRecords`], [`ProductLinks`] | products read, listed, rendered, written; what their records say; their categories and websites |
//! | [`Media`] | a product's gallery and image writes |
//! | [`Stock`] | stock items |
//! | [`People`] (with [`AddressCalls`] or [`AddressList`]) | customers and their addresses |
//! | [`Orders`] | orders and their comments |
//! | [`SignIn`] | customers' store passwords, and the sessions a back end keeps for them |
//!
//! A back end is any type that implements them all ([`Backend`]); the layers above hold an
//! `Arc<dyn Backend>` and never a store's client. Where a store lacks a feature, the trait's
//! default says so. Records that the adapter's mapping files read cross the port in the
//! store's own shape (bytes, as the cache keeps them); what the layers above reason about
//! crosses typed. Failures are [`BackendError`]s whichever store answered; what the client
//! is told of them is decided above the port (`rules::backend_errors`). How a store's
//! traffic looks to the recorder is its [`WireShape`]. Adding a back end:
//! docs/architecture.md, "Adding a back end".

pub mod catalog;
pub mod error;
pub mod health;
pub mod media;
pub mod orders;
pub mod people;
pub mod query;
pub mod records;
pub mod setup;
pub mod sign_in;
pub mod stock;
pub mod wire;

pub use catalog::{
    Assignments, Catalog, CustomerPrices, IdPage, ProductDraft, ProductLinks, ProductRecords,
    RenderedTier, Renderings, SentPrices, TierFields, TierPrice,
};
pub use error::{BackendError, StoreMessage};
pub use health::{CircuitProbe, CircuitState};
pub use media::{Image, ImageChange, ImageFile, ImageRefusal, Media, NewImage};
pub use orders::{OrderParts, Orders};
pub use people::{
    AddressCalls, AddressEdit, AddressList, AddressWrites, NoAddressWrites, People, RegionChoice,
};
pub use query::{Direction, MAX_PAGE_SIZE, SearchCriteria};
pub use records::{CategoryLink, IdSku, Page, Scope, SearchResult, lenient_u64};
pub use setup::{Category, Country, Region, StoreConfig, StoreSetup, StoreView};
pub use sign_in::{SessionKeeper, SignIn, SignInFailure, SignedIn, StoreSession};
pub use stock::Stock;
pub use wire::{Canned, Failure, FailureAt, LiveCredentials, ON_BEHALF_OF, WireShape, escape_html};

/// Declares [`Backend`] over the port's areas and implements it for every type that
/// implements them all: the list of areas is written once.
macro_rules! backend_of_areas {
    ($($area:path),+ $(,)?) => {
        /// A store behind the gateway: every area of the port. Implemented for every type
        /// that implements them all; nothing to write for it.
        pub trait Backend: $($area +)+ Send + Sync + std::fmt::Debug {}

        impl<T> Backend for T where T: $($area +)+ Send + Sync + std::fmt::Debug {}
    };
}

backend_of_areas!(
    StoreSetup,
    Catalog,
    ProductRecords,
    ProductLinks,
    Media,
    Stock,
    People,
    Orders,
    SignIn,
);
