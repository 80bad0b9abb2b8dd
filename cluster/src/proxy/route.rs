//! What a request to the Kubernetes API is about, as the API server's own request info reads a
//! path: the verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
//! `deletecollection`) and the object (`apiGroup`, `resource`, `namespace`, `name`,
//! `subresource`), in the names an audit entry's `objectRef` uses (PROXY-3).

use serde::Serialize;

/// The object a request is about; empty strings where the path has none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    pub api_group: String,
    pub resource: String,
    pub namespace: String,
    pub name: String,
    pub subresource: String,
}

/// A request's verb and object; `None` as object for paths that name no resource (`/version`,
/// discovery, `/healthz`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub verb: &'static str,
    pub object: Option<ObjectRef>,
}

impl Route {
    /// Whether the answer is a stream of watch events rather than one body.
    pub fn is_watch(&self) -> bool {
        self.verb == "watch"
    }
}

/// Reads `method` and the request's `path` and `query` (without the `?`).
pub fn route(method: &str, path: &str, query: &str) -> Route {
    let watch_param = query_value(query, "watch").is_some_and(|v| v == "true" || v == "1");
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let api_group = match parts.first() {
        Some(&"api") if parts.len() >= 2 => {
            parts.drain(..2);
            String::new()
        }
        Some(&"apis") if parts.len() >= 3 => {
            let group = parts[1].to_string();
            parts.drain(..3);
            group
        }
        _ => {
            return Route {
                verb: plain_verb(method),
                object: None,
            }
        }
    };
    // The deprecated `/api/v1/watch/...` paths watch what follows.
    let watch_prefix = parts.first() == Some(&"watch");
    if watch_prefix {
        parts.remove(0);
    }
    let mut object = ObjectRef {
        api_group,
        ..ObjectRef::default()
    };
    // `namespaces/NS/RESOURCE...`, except the namespace object itself (`namespaces/NS`, and its
    // `status` and `finalize` subresources).
    if parts.first() == Some(&"namespaces")
        && parts.len() >= 3
        && !(parts.len() == 3 && matches!(parts[2], "status" | "finalize"))
    {
        object.namespace = parts[1].to_string();
        parts.drain(..2);
    }
    let mut rest = parts.into_iter();
    let Some(resource) = rest.next() else {
        return Route {
            verb: plain_verb(method),
            object: None,
        };
    };
    object.resource = resource.to_string();
    object.name = rest.next().unwrap_or("").to_string();
    object.subresource = rest.collect::<Vec<_>>().join("/");
    let named = !object.name.is_empty();
    let verb = match method {
        "GET" | "HEAD" if watch_prefix || watch_param => "watch",
        "GET" | "HEAD" if named => "get",
        "GET" | "HEAD" => "list",
        "POST" => "create",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" if named => "delete",
        "DELETE" => "deletecollection",
        _ => "unknown",
    };
    Route {
        verb,
        object: Some(object),
    }
}

fn plain_verb(method: &str) -> &'static str {
    match method {
        "GET" | "HEAD" => "get",
        "POST" => "post",
        "PUT" => "put",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "unknown",
    }
}

/// The value of `key` in a query string (`a=1&watch=true`), undecoded: the keys and values the
/// proxy reads (`watch`, `sendInitialEvents`) need no decoding.
pub fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(group: &str, resource: &str, ns: &str, name: &str, sub: &str) -> ObjectRef {
        ObjectRef {
            api_group: group.into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            subresource: sub.into(),
        }
    }

    #[test]
    fn paths_read_as_the_api_server_reads_them() {
        let cases = [
            (
                "GET",
                "/api/v1/pods",
                "limit=500",
                "list",
                object("", "pods", "", "", ""),
            ),
            (
                "GET",
                "/api/v1/pods",
                "allowWatchBookmarks=true&resourceVersion=12&watch=true",
                "watch",
                object("", "pods", "", "", ""),
            ),
            (
                "GET",
                "/api/v1/watch/namespaces/a/pods",
                "",
                "watch",
                object("", "pods", "a", "", ""),
            ),
            (
                "GET",
                "/api/v1/namespaces/a/pods/p",
                "",
                "get",
                object("", "pods", "a", "p", ""),
            ),
            (
                "GET",
                "/api/v1/nodes/n",
                "",
                "get",
                object("", "nodes", "", "n", ""),
            ),
            (
                "PATCH",
                "/api/v1/namespaces/a/pods/p/status",
                "",
                "patch",
                object("", "pods", "a", "p", "status"),
            ),
            (
                "DELETE",
                "/api/v1/namespaces/a/pods/p",
                "",
                "delete",
                object("", "pods", "a", "p", ""),
            ),
            (
                "DELETE",
                "/api/v1/namespaces/a/pods",
                "",
                "deletecollection",
                object("", "pods", "a", "", ""),
            ),
            (
                "POST",
                "/api/v1/namespaces/a/events",
                "",
                "create",
                object("", "events", "a", "", ""),
            ),
            (
                "PUT",
                "/apis/events.k8s.io/v1/namespaces/a/events/e",
                "",
                "update",
                object("events.k8s.io", "events", "a", "e", ""),
            ),
            (
                "GET",
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
                "",
                "get",
                object("coordination.k8s.io", "leases", "kube-system", "l", ""),
            ),
            (
                "GET",
                "/api/v1/namespaces/a",
                "",
                "get",
                object("", "namespaces", "", "a", ""),
            ),
            (
                "PUT",
                "/api/v1/namespaces/a/finalize",
                "",
                "update",
                object("", "namespaces", "", "a", "finalize"),
            ),
        ];
        for (method, path, query, verb, want) in cases {
            let r = route(method, path, query);
            assert_eq!(
                (r.verb, r.object.as_ref()),
                (verb, Some(&want)),
                "{method} {path}?{query}"
            );
        }
        assert!(route("GET", "/api/v1/pods", "watch=1").is_watch());
        assert!(!route("GET", "/api/v1/pods", "watch=false").is_watch());
    }

    #[test]
    fn paths_naming_no_resource_have_no_object() {
        for path in [
            "/version",
            "/healthz",
            "/api",
            "/apis",
            "/apis/apps",
            "/api/v1",
            "/apis/apps/v1",
        ] {
            let r = route("GET", path, "");
            assert_eq!((r.verb, r.object), ("get", None), "{path}");
        }
    }
}
