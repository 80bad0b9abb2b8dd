//! `taintcheck replay PROPERTY`: the property's shortest counterexample run on the reference
//! runtime's threads under a deterministic schedule taken from the path, checked against the
//! model after every turn. Exit 0 when the runtime follows the whole path (it reaches the
//! violating state), 1 when the property holds (nothing to replay) or the runtime leaves the
//! path, 2 on bad usage. Spec: CHECK-7, RT-SCHED-1, RT-SCHED-2.

use super::args::PropertyArgs;
use super::failure::Outcome;
use super::output::outln;
use std::process::ExitCode;
use taintcheck_model::check::replay::Schedule;
use taintcheck_model::check::shortest;
use taintcheck_model::check::trace::Trace;
use taintcheck_runtime::replay::replay;
use taintcheck_runtime::timeline;

pub fn run(args: &PropertyArgs) -> Outcome {
    let info = args.info()?;
    let model = args.model.model()?;
    let Some(path) = shortest::counterexamples(&model, &[info.name]).remove(info.name) else {
        eprintln!(
            "taintcheck: {} holds on {}: nothing to replay",
            info.id,
            args.model.command_line()
        );
        return Ok(ExitCode::from(1));
    };
    let trace = Trace::of(&model, &path);
    let schedule = Schedule::of(&model, &trace);
    let run = replay(&schedule, model.profile);
    outln!(
        "Replaying {}'s shortest counterexample ({} steps; {} turns with the initial instant's \
         settling) on the runtime under {}:",
        info.id,
        trace.steps.len(),
        schedule.turns.len(),
        model.profile.name
    );
    outln!("{}", timeline::render(&run.records).trim_end());
    match run.divergence {
        None => {
            outln!(
                "\nThe runtime followed all {} turns: after each, its clock, API objects, \
                 informer caches and controller equal the model's. It reaches step {}, where \
                 the model finds {} violated.",
                run.followed,
                trace.steps.len(),
                info.id
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(d) => {
            let at = d.step.map_or_else(
                || "the initial instant".to_string(),
                |n| format!("step {n}"),
            );
            outln!(
                "\nThe runtime left the path at turn {} ({at}): {}",
                d.turn + 1,
                d.why
            );
            Ok(ExitCode::from(1))
        }
    }
}
