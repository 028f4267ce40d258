//! The error body Magento's Web API renders, and the HTTP status it maps each exception to.
//!
//! Magento sends `{"message": template, "parameters": [...] | {...}}`, adds `errors` only when
//! an aggregate input exception carries two or more errors, and omits `parameters` when there
//! are none. Statuses follow `ErrorProcessor::maskException`: no-such-entity 404,
//! authorization 401, every other localized exception 400.

use serde_json::{Map, Value, json};

use crate::webapi::messages;

/// Positional (`%1`) or named (`%fieldName`) parameters of a message template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Params {
    None,
    List(Vec<Value>),
    Named(Map<String, Value>),
}

impl Params {
    fn to_json(&self) -> Option<Value> {
        match self {
            Params::None => None,
            Params::List(list) if list.is_empty() => None,
            Params::List(list) => Some(Value::Array(list.clone())),
            Params::Named(map) if map.is_empty() => None,
            Params::Named(map) => Some(Value::Object(map.clone())),
        }
    }
}

/// Builds named parameters keeping the order Magento uses in its phrases.
pub(crate) fn named(pairs: &[(&str, Value)]) -> Params {
    let mut map = Map::new();
    for (key, value) in pairs {
        map.insert((*key).to_string(), value.clone());
    }
    Params::Named(map)
}

/// One entry of an aggregate input exception.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ErrorItem {
    pub(crate) message: String,
    pub(crate) parameters: Params,
}

impl ErrorItem {
    pub(crate) fn new(message: impl Into<String>, parameters: Params) -> Self {
        ErrorItem {
            message: message.into(),
            parameters,
        }
    }

    pub(crate) fn required(field: &str) -> Self {
        ErrorItem::new(
            messages::REQUIRED_FIELD,
            named(&[("fieldName", json!(field))]),
        )
    }

    pub(crate) fn invalid_value(field: &str, value: Value) -> Self {
        ErrorItem::new(
            messages::INVALID_FIELD_VALUE,
            named(&[("fieldName", json!(field)), ("value", value)]),
        )
    }
}

/// What an error answer holds: status, message template, parameters and aggregated errors.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ErrorBody {
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) parameters: Params,
    pub(crate) errors: Vec<ErrorItem>,
}

/// An error answer. Boxed so that `Result`s stay small on the happy path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError(Box<ErrorBody>);

impl std::ops::Deref for ApiError {
    type Target = ErrorBody;

    fn deref(&self) -> &ErrorBody {
        &self.0
    }
}

impl ApiError {
    pub(crate) fn new(status: u16, message: impl Into<String>, parameters: Params) -> Self {
        ApiError(Box::new(ErrorBody {
            status,
            message: message.into(),
            parameters,
            errors: Vec::new(),
        }))
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, message, Params::None)
    }

    pub(crate) fn bad_request_with(message: impl Into<String>, parameters: Params) -> Self {
        ApiError::new(400, message, parameters)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(404, message, Params::None)
    }

    pub(crate) fn not_found_with(message: impl Into<String>, parameters: Params) -> Self {
        ApiError::new(404, message, parameters)
    }

    /// `NoSuchEntityException::singleField`: 404 `No such entity with %fieldName = %fieldValue`.
    pub(crate) fn no_such_entity(field: &str, value: Value) -> Self {
        ApiError::not_found_with(
            messages::NO_SUCH_ENTITY,
            named(&[("fieldName", json!(field)), ("fieldValue", value)]),
        )
    }

    pub(crate) fn unauthorized(resource: &str) -> Self {
        ApiError::new(
            401,
            messages::NOT_AUTHORIZED,
            named(&[("resources", json!(resource))]),
        )
    }

    pub(crate) fn required(field: &str) -> Self {
        ApiError::aggregate(vec![ErrorItem::required(field)])
    }

    pub(crate) fn type_mismatch(value: &Value, expected: &str) -> Self {
        let shown = match value {
            Value::String(s) => json!(s),
            other => json!(other.to_string()),
        };
        ApiError::bad_request_with(
            messages::TYPE_MISMATCH,
            named(&[("value", shown), ("type", json!(expected))]),
        )
    }

    /// Renders an `InputException` the way `AbstractAggregateException` does: a single error
    /// becomes the message itself; two or more become the generic message plus `errors`.
    pub(crate) fn aggregate(mut items: Vec<ErrorItem>) -> Self {
        match items.len() {
            0 => ApiError::bad_request(messages::INPUT_EXCEPTIONS),
            1 => {
                let item = items.remove(0);
                ApiError::bad_request_with(item.message, item.parameters)
            }
            _ => ApiError(Box::new(ErrorBody {
                status: 400,
                message: messages::INPUT_EXCEPTIONS.to_string(),
                parameters: Params::None,
                errors: items,
            })),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut body = Map::new();
        body.insert("message".into(), json!(self.message));
        if let Some(parameters) = self.parameters.to_json() {
            body.insert("parameters".into(), parameters);
        }
        if !self.errors.is_empty() {
            let errors = self
                .errors
                .iter()
                .map(|item| {
                    let mut entry = Map::new();
                    entry.insert("message".into(), json!(item.message));
                    if let Some(parameters) = item.parameters.to_json() {
                        entry.insert("parameters".into(), parameters);
                    }
                    Value::Object(entry)
                })
                .collect();
            body.insert("errors".into(), Value::Array(errors));
        }
        Value::Object(body)
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// Substitutes `%1`/`%name` placeholders, for the few Magento messages that are rendered before
/// they reach the client (the EAV validator joins rendered texts into a new phrase).
pub(crate) fn render(template: &str, positional: &[&str]) -> String {
    let mut out = template.to_string();
    for (index, value) in positional.iter().enumerate().rev() {
        out = out.replace(&format!("%{}", index + 1), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_error_aggregate_is_flattened() {
        let error = ApiError::required("searchCriteria");
        assert_eq!(
            error.to_json(),
            json!({"message": messages::REQUIRED_FIELD, "parameters": {"fieldName": "searchCriteria"}})
        );
    }

    #[test]
    fn multiple_errors_are_listed() {
        let error = ApiError::aggregate(vec![
            ErrorItem::required("username"),
            ErrorItem::required("password"),
        ]);
        let body = error.to_json();
        assert_eq!(body["message"], messages::INPUT_EXCEPTIONS);
        assert_eq!(body["errors"].as_array().map(Vec::len), Some(2));
        assert!(body.get("parameters").is_none());
    }
}
