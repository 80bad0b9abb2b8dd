//! Arguments several commands share, each parsed in one place.

use super::check::ModelArgs;
use super::failure::Failure;
use clap::builder::{RangedI64ValueParser, TypedValueParser};
use clap::Args;
use taintcheck_core::profile::Profile;
use taintcheck_core::releases::{self, Gate, Release, ReleaseError, RELEASES};
use taintcheck_model::check::issue;
use taintcheck_model::check::properties::PropertyInfo;

/// `--profile`: a name of [`Profile::NAMES`] or a Kubernetes release (`1.31`, `1.31.4`,
/// `1.26.0-1.26.10`, a range's name with a gate flipped), parsed into the profile itself. An
/// unknown value is a usage error naming what is accepted.
pub fn profile_parser() -> ProfileParser {
    ProfileParser
}

/// See [`profile_parser`].
#[derive(Clone, Copy, Debug)]
pub struct ProfileParser;

impl TypedValueParser for ProfileParser {
    type Value = Profile;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Profile, clap::Error> {
        let text = value.to_string_lossy();
        if let Some(p) = Profile::by_name(&text) {
            return Ok(p);
        }
        let arg = arg.map_or_else(|| "--profile".to_string(), ToString::to_string);
        let why = match Release::parse(&text) {
            Err(ReleaseError::Malformed) => String::new(),
            Err(e) => format!("{e}; "),
            Ok(_) => String::new(),
        };
        let (first, last) = (RELEASES[0], RELEASES[RELEASES.len() - 1]);
        let message = format!(
            "invalid value '{text}' for '{arg}': {why}expected {} or a Kubernetes release \
             1.{}.{} to 1.{}.{} (1.MINOR or 1.MINOR.PATCH)\n",
            Profile::NAMES.join(", "),
            first.minor,
            first.patches.0,
            last.minor,
            last.patches.1
        );
        Err(clap::Error::raw(clap::error::ErrorKind::InvalidValue, message).with_cmd(cmd))
    }
}

/// `--feature-gates NAME=BOOL,...` as kube-controller-manager spells it.
#[derive(Clone, Debug)]
pub struct GateSettings(pub Vec<(Gate, bool)>);

pub fn gates_parser(text: &str) -> Result<GateSettings, String> {
    releases::parse_gates(text)
        .map(GateSettings)
        .map_err(|e| e.to_string())
}

/// A duration in ms that must not be negative (latency bounds).
pub fn non_negative_ms() -> RangedI64ValueParser<i64> {
    clap::value_parser!(i64).range(0..)
}

/// The behaviour profile a command runs, checks or explores.
#[derive(Args, Debug, Clone)]
pub struct ProfileArg {
    /// The behaviour profile: v1.18 (1.18.0 to 1.18.8), latest (the newest release as shipped),
    /// fixed (our design), or a Kubernetes release, 1.MINOR (its newest patches) or
    /// 1.MINOR.PATCH (`taintcheck profiles` lists them).
    #[arg(long, visible_alias = "kubernetes", default_value = "latest", value_parser = profile_parser())]
    profile: Profile,
    /// kube-controller-manager's gates where they differ from the release's defaults, as it
    /// spells them: `TaintTolerationComparisonOperators=true` (a release profile only).
    #[arg(long, value_name = "NAME=BOOL,...", value_parser = gates_parser)]
    feature_gates: Option<GateSettings>,
}

impl ProfileArg {
    /// The profile with its feature gates, or a usage error naming the gate (exit 2).
    pub fn profile(&self) -> Result<Profile, Failure> {
        let gates = self.feature_gates.as_ref().map_or(&[][..], |g| &g.0[..]);
        with_gates(self.profile, gates)
    }
}

/// `profile` with `gates` set, as kube-controller-manager of its release would take them.
pub fn with_gates(profile: Profile, gates: &[(Gate, bool)]) -> Result<Profile, Failure> {
    if gates.is_empty() {
        return Ok(profile);
    }
    // `v1.18` is 1.18.0 to 1.18.8, `latest` the newest release; `fixed` is no release.
    let release = match profile.name {
        "v1.18" => Release::find(18, Some(8)),
        "latest" => RELEASES.last(),
        name => releases::release_of(name),
    };
    let release = release.ok_or_else(|| {
        Failure::usage(format!(
            "--feature-gates: profile {} is not a Kubernetes release: gates apply to a \
             release profile (--profile 1.MINOR)",
            profile.name
        ))
    })?;
    // A gate-flipped profile starts from its range's defaults again.
    release.with_gates(gates).map_err(|e| {
        Failure::usage(format!(
            "--feature-gates: Kubernetes {} (profile {}): {e}",
            release.name, profile.name
        ))
    })
}

/// The profile of Kubernetes `version` (`1.31`, `1.31.4`) with `gates` (as
/// kube-controller-manager spells them) set.
pub fn release_profile(version: &str, gates: Option<&str>) -> Result<Profile, Failure> {
    let range = Release::parse(version)
        .map_err(|e| Failure::usage(format!("Kubernetes {version}: {e}")))?;
    let gates = releases::parse_gates(gates.unwrap_or(""))
        .map_err(|e| Failure::usage(format!("--feature-gates: {e}")))?;
    range
        .with_gates(&gates)
        .map_err(|e| Failure::usage(format!("--feature-gates: Kubernetes {version}: {e}")))
}

/// A violated `always` property and the model it is violated on (`minimize`, `replay`).
#[derive(Args, Debug)]
pub struct PropertyArgs {
    /// The violated `always` property: its spec id (`EVICT-1`) or full name.
    pub property: String,
    #[command(flatten)]
    pub model: ModelArgs,
}

impl PropertyArgs {
    /// The property named, or a usage error.
    pub fn info(&self) -> Result<&'static PropertyInfo, Failure> {
        issue::property(&self.property).ok_or_else(|| {
            Failure::usage(format!(
                "PROPERTY: Unsupported value: \"{}\": expected the id or name of an `always` \
                 property (EVICT-1, ...)",
                self.property
            ))
        })
    }
}
