//! Arguments several commands share, each parsed in one place.

use super::check::ModelArgs;
use super::failure::Failure;
use clap::builder::{PossibleValue, PossibleValuesParser, RangedI64ValueParser, TypedValueParser};
use clap::Args;
use taintcheck_model::check::issue;
use taintcheck_model::check::properties::PropertyInfo;
use taintcheck_model::profile::{Profile, PROVENANCE};

/// `--profile`: one of [`Profile::NAMES`], parsed into the profile itself. An unknown name is a
/// usage error listing the names; `--help` shows the Kubernetes releases each one mirrors.
pub fn profile_parser() -> impl TypedValueParser<Value = Profile> {
    PossibleValuesParser::new(
        PROVENANCE
            .iter()
            .map(|p| PossibleValue::new(p.name).help(p.kubernetes)),
    )
    .map(|name| Profile::by_name(&name).expect("every possible value names a profile"))
}

/// A duration in ms that must not be negative (latency bounds).
pub fn non_negative_ms() -> RangedI64ValueParser<i64> {
    clap::value_parser!(i64).range(0..)
}

/// The behaviour profile a command runs, checks or explores.
#[derive(Args, Debug, Clone)]
pub struct ProfileArg {
    /// The behaviour profile (`taintcheck profiles` says which Kubernetes releases each mirrors).
    #[arg(long, default_value = "latest", value_parser = profile_parser())]
    pub profile: Profile,
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
