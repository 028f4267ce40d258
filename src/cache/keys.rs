//! The cache's vocabulary: every key and tag the gateway files entries under, and what
//! invalidates each. Nothing else spells a key or a tag; the purge endpoint translates
//! Magento's tags through [`from_magento_tag`].
//!
//! # Keys
//!
//! | key | holds | filed by |
//! |---|---|---|
//! | `r\|sku\|<product id>` | the product's SKU | product index |
//! | `r\|prod\|<store code>\|<sku>` | Magento's product record in one store | record reads |
//! | `r\|render\|<store id>\|<product id>` | the product's rendering (prices shoppers see) | record reads |
//! | `r\|sx\|<page>` | a page of the stock item index | stock index |
//! | `r\|si\|<item id>` | a stock item's product id | stock index |
//! | `r\|attrset\|<set id>` | an attribute set's members | image upload checks |
//! | `r\|countries\|<store code>` | the allowed countries and regions | directory |
//! | `r\|storeviews`, `r\|storeconfigs` | store views, their configuration | stores |
//! | `r\|websites` | the websites | product website assignments |
//! | `r\|cat\|<category id>` | a category (is it there, is it active) | product category assignments |
//! | `r\|cgroup\|<customer id>` | a customer's group (their prices); never served | customer groups |
//! | `b\|<audience>\|<format>\|<view>` | a rendered answer; `<view>` below | response cache |
//! | `f\|<audience>\|<format>\|<path?query>` | an alias of a `b\|` key (it holds that key, not the entry), filed under the raw request for the fast path, for canonical requests only (`http::canonical`) | fast path |
//!
//! The audience ([`audience`]) is the user type, and for a customer shown group prices
//! (tier prices) also the customer group, `customer.g<group>`: such an answer is never
//! shared between groups. A request in the original's profile adds `~o`: its answers are
//! written otherwise. Views (the `<view>` of a `b|` key): `p/<id>` a product,
//! `pl?<list params>` the product list, `c/<category id>?<list params>` a category's
//! products, `pi/<product id>/<store>` a product's images, `pi/<product id>/<store>/<image
//! id>` one image; a product view in a store view other than the default ends in
//! `@<store code>` before the parameters.
//!
//! # Tags, and what invalidates each
//!
//! | tag | on entries about | dropped by |
//! |---|---|---|
//! | `p:<product id>` | one product (records, views, images, lists showing it) | product create/update/delete, stock write, image write, purge `cat_p_<id>` |
//! | `s:<sku>` | one product, by SKU | the same writes as `p:` |
//! | `pl` | every product list | product create/update/delete, stock write, image write, purge `cat_p`, `cat_p_<id>` |
//! | `c:<category id>` | a category's product list, the category's record | category assignment through the gateway, purge `cat_c_<id>`, `cat_c_p_<id>` |
//! | `i:<product id>` | a product's images | image write, product delete |
//! | `sx` | the stock item index pages | product create/delete |
//! | `sx:<product id>` | the index entry of the product's stock item | product delete, an entry that disagrees with Magento |
//! | `stores` | store views and configs, websites, views priced in a store | purge `stores` |
//! | `cg:<customer id>` | a customer's group entry | customer update/delete through the gateway |
//! | `directory` | countries and regions | purge `directory` |
//! | `attrsets` | attribute set members | purge `attrsets` |
//!
//! Every entry also expires (`STOREGATE_CACHE_TTL`); a purge with `{"all": true}` drops all.

use std::borrow::Cow;

use crate::auth::UserType;
use crate::auth::price_group::PriceGroup;
use crate::context::profile::Profile;
use crate::http::Format;

/// Who shares a rendered answer: the user type, and the customer group when the answer
/// shows a customer group's prices (guests are all one group), with the customer's tax
/// destination when the store renders for each customer (`auth::price_group::PriceGroup`).
pub fn audience(user: UserType, price_group: Option<PriceGroup>) -> Cow<'static, str> {
    // Answers in the original's profile are written otherwise (its XML root, its JSON
    // types): a request in it (an OAuth consumer's, docs/oauth.md) shares them only with
    // requests in it.
    let original = Profile::current() == Profile::Original;
    let suffix = if original { "~o" } else { "" };
    match (user, price_group) {
        (UserType::Customer, Some(prices)) => {
            Cow::Owned(format!("customer.{}{suffix}", price_audience(prices)))
        }
        (user, _) if !original => Cow::Borrowed(user.as_str()),
        (user, _) => Cow::Owned(format!("{}~o", user.as_str())),
    }
}

/// A price group in a key: `g1`, or `g1.t<destination>`.
pub fn price_audience(prices: PriceGroup) -> String {
    match prices.destination {
        None => format!("g{}", prices.group),
        Some(d) => format!("g{}.t{d:016x}", prices.group),
    }
}

/// Keys of cache entries.
pub mod key {
    use super::Format;

    /// A product id's SKU.
    pub fn sku_of(product_id: u64) -> String {
        format!("r|sku|{product_id}")
    }

    /// Magento's record of a product in a store (by code).
    pub fn product(store_code: &str, sku: &str) -> String {
        format!("r|prod|{store_code}|{sku}")
    }

    /// A product's rendering in a store (by id).
    pub fn render_info(store_id: u64, product_id: u64) -> String {
        format!("r|render|{store_id}|{product_id}")
    }

    /// A store's rendering of a product for a customer group and tax destination
    /// (`super::price_audience`), made with a customer's session.
    pub fn render_for(store_id: u64, product_id: u64, prices: &str) -> String {
        format!("r|render|{store_id}|{product_id}|{prices}")
    }

    /// A page of the stock item index.
    pub fn stock_index_page(page: u32) -> String {
        format!("r|sx|{page}")
    }

    /// A stock item's product id.
    pub fn stock_item(item_id: u64) -> String {
        format!("r|si|{item_id}")
    }

    /// The members of an attribute set.
    pub fn attribute_set(set_id: i64) -> String {
        format!("r|attrset|{set_id}")
    }

    /// The allowed countries of a store (by code).
    pub fn countries(store_code: &str) -> String {
        format!("r|countries|{store_code}")
    }

    /// The store views.
    pub fn store_views() -> String {
        "r|storeviews".to_owned()
    }

    /// The websites.
    pub fn websites() -> String {
        "r|websites".to_owned()
    }

    /// A category's record.
    pub fn category(category_id: u64) -> String {
        format!("r|cat|{category_id}")
    }

    /// The store views' configurations.
    pub fn store_configs() -> String {
        "r|storeconfigs".to_owned()
    }

    /// A customer's group.
    pub fn customer_group(customer_id: u64) -> String {
        format!("r|cgroup|{customer_id}")
    }

    /// A rendered answer: one view (see [`super::view`]) for one audience
    /// ([`super::audience`]) and format.
    pub fn body(audience: &str, format: Format, view: &str) -> String {
        format!("b|{audience}|{}|{view}", format.as_str())
    }

    /// A rendered answer filed under the raw request (path and query) for the fast path.
    pub fn fast(audience: &str, format: Format, path_and_query: &str) -> String {
        // Built by hand, not by `format!`: every cache hit looks one up.
        let format = format.as_str();
        let mut key =
            String::with_capacity(4 + audience.len() + format.len() + path_and_query.len());
        key.push_str("f|");
        key.push_str(audience);
        key.push('|');
        key.push_str(format);
        key.push('|');
        key.push_str(path_and_query);
        key
    }
}

/// The views of [`key::body`]: which answer, named by the resource and its canonical list
/// parameters (not the raw query: unknown parameters must not multiply entries).
pub mod view {
    /// `@<store code>` for a store view other than the default, else nothing.
    fn at(store: Option<&str>) -> String {
        store.map(|code| format!("@{code}")).unwrap_or_default()
    }

    /// One product (in a store view, or the default one).
    pub fn product(id: u64, store: Option<&str>) -> String {
        format!("p/{id}{}", at(store))
    }

    /// The product list.
    pub fn product_list(store: Option<&str>, canonical_params: &str) -> String {
        format!("pl{}?{canonical_params}", at(store))
    }

    /// A category's products.
    pub fn category(category_id: u64, store: Option<&str>, canonical_params: &str) -> String {
        format!("c/{category_id}{}?{canonical_params}", at(store))
    }

    /// A product's images in one place (a store, or the default).
    pub fn images(product_id: u64, place: &str) -> String {
        format!("pi/{product_id}/{place}")
    }

    /// One image of a product.
    pub fn image(product_id: u64, place: &str, image_id: impl std::fmt::Display) -> String {
        format!("pi/{product_id}/{place}/{image_id}")
    }
}

/// Tags: what invalidation works on (table above).
pub use super::tags as tag;

/// A Magento cache tag as the gateway's tags; the gateway's own tags as they are.
///
/// | Magento tag | purges |
/// |---|---|
/// | `cat_p_<id>` (a product) | `p:<id>` and `pl` (the product may enter or leave any list) |
/// | `cat_p` (products in general) | `pl` |
/// | `cat_c_<id>`, `cat_c_p_<id>` (a category, its products) | `c:<id>` |
pub fn from_magento_tag(magento_tag: &str) -> Vec<String> {
    let id_after = |prefix: &str| {
        magento_tag
            .strip_prefix(prefix)
            .filter(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|rest| rest.parse::<u64>().ok())
    };
    if let Some(id) = id_after("cat_c_p_").or_else(|| id_after("cat_c_")) {
        return vec![tag::category(id)];
    }
    if let Some(id) = id_after("cat_p_") {
        return vec![tag::product(id), tag::LISTS.to_owned()];
    }
    if magento_tag == "cat_p" {
        return vec![tag::LISTS.to_owned()];
    }
    vec![magento_tag.to_owned()]
}

#[cfg(test)]
mod tests {
    use super::from_magento_tag as translate;

    #[test]
    fn answers_with_group_prices_are_never_shared_between_groups() {
        use super::{UserType, audience, key};
        use crate::auth::price_group::PriceGroup;
        let group = |group, destination| Some(PriceGroup { group, destination });
        assert_eq!(audience(UserType::Customer, group(2, None)), "customer.g2");
        assert_eq!(
            audience(UserType::Customer, group(2, Some(0xab))),
            "customer.g2.t00000000000000ab"
        );
        assert_eq!(audience(UserType::Customer, None), "customer");
        // Every guest is in one group (NOT LOGGED IN).
        assert_eq!(audience(UserType::Guest, group(0, None)), "guest");
        let fast = |prices| {
            key::fast(
                &audience(UserType::Customer, prices),
                crate::http::Format::Json,
                "/api/rest/products/1",
            )
        };
        assert_ne!(fast(group(1, None)), fast(group(2, None)));
        // One group, customers taxed for different places: not shared either.
        assert_ne!(fast(group(1, Some(1))), fast(group(1, Some(2))));
    }

    #[test]
    fn magento_tags_are_translated() {
        assert_eq!(translate("cat_p_12"), vec!["p:12", "pl"]);
        assert_eq!(translate("cat_c_4"), vec!["c:4"]);
        assert_eq!(translate("cat_c_p_4"), vec!["c:4"]);
        assert_eq!(translate("cat_p"), vec!["pl"]);
        assert_eq!(translate("cat_p_x"), vec!["cat_p_x"]);
        assert_eq!(translate("s:24-MB01"), vec!["s:24-MB01"]);
    }
}
