//! `touchmove arbiter`: arbiter controls for a running `touchmove record`, over the
//! authenticated socket in its output folder.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::board::ColorName;
use crate::record::arbiter::{ArbiterAction, ArbiterRequest, DrawClaim};

/// Arguments of `touchmove arbiter`.
#[derive(Debug, clap::Args)]
pub struct ArbiterArgs {
    /// The recorder's output folder (its state directory `OUT.state` holds `arbiter.sock`
    /// and `arbiter.token`).
    #[arg(long, default_value = "touchmove-out")]
    pub out: PathBuf,
    /// Who acts (journalled with the action); default: $USER.
    #[arg(long)]
    pub who: Option<String>,
    /// Board number.
    #[arg(long)]
    pub board: u32,
    /// What to do.
    #[command(subcommand)]
    pub action: ArbiterCommand,
}

/// Arbiter actions.
#[derive(Debug, clap::Subcommand)]
pub enum ArbiterCommand {
    /// Set the result: 1-0, 0-1, 1/2-1/2, or * to reopen (use --reason forfeit for forfeits).
    Result {
        /// The result.
        result: String,
        /// Why (written as a comment and the Termination tag).
        #[arg(long, default_value = "arbiter decision")]
        reason: String,
    },
    /// Accept or reject the penalty proposed by the alert at a ply (7.5.5).
    Penalty {
        /// Ply of the alert.
        ply: u32,
        /// accept or reject.
        #[arg(value_parser = ["accept", "reject"])]
        decision: String,
    },
    /// Add (or with a minus sign, subtract) seconds on a player's clock.
    Time {
        /// white or black.
        #[arg(value_parser = ["white", "black"])]
        side: String,
        /// Seconds to add; negative to subtract.
        #[arg(allow_negative_numbers = true)]
        seconds: i64,
    },
    /// Replace the moves from ply N on (SAN or UCI).
    Replace {
        /// First ply replaced (1 = White's first move).
        from_ply: u32,
        /// The moves that stand instead.
        moves: Vec<String>,
    },
    /// Settle the order of moves made while the link was down (an "order not observed"
    /// alert for the span from ply N): 0 confirms the order recorded, K takes the K-th other
    /// order the alert named; the moves after the span stay.
    Order {
        /// First ply of the span (the alert's ply).
        ply: u32,
        /// 0 for the recorded order, K for the K-th other.
        #[arg(default_value_t = 0)]
        pick: usize,
    },
    /// Take back to ply N (the position after N plies stands).
    Takeback {
        /// Plies kept.
        to_ply: u32,
    },
    /// Check a draw claim by the player to move.
    Claim {
        /// threefold or fifty.
        #[arg(value_parser = ["threefold", "fifty"])]
        rule: String,
        /// The move the claimant intends to play (SAN or UCI), not yet played.
        #[arg(long)]
        with_move: Option<String>,
    },
    /// Start a new game on the board.
    NewGame,
    /// Add a note to the record after a ply (0 = before the first move).
    Note {
        /// Ply the note follows.
        ply: u32,
        /// The note.
        text: String,
    },
}

fn action(command: ArbiterCommand) -> ArbiterAction {
    match command {
        ArbiterCommand::Result { result, reason } => ArbiterAction::SetResult { result, reason },
        ArbiterCommand::Penalty { ply, decision } => ArbiterAction::DecidePenalty {
            ply,
            accept: decision == "accept",
        },
        ArbiterCommand::Time { side, seconds } => ArbiterAction::AdjustTime {
            side: if side == "white" {
                ColorName::White
            } else {
                ColorName::Black
            },
            delta_ms: seconds.saturating_mul(1000),
        },
        ArbiterCommand::Replace { from_ply, moves } => {
            ArbiterAction::ReplaceMoves { from_ply, moves }
        }
        ArbiterCommand::Order { ply, pick } => ArbiterAction::SettleOrder { ply, pick },
        ArbiterCommand::Takeback { to_ply } => ArbiterAction::TakeBack { to_ply },
        ArbiterCommand::Claim { rule, with_move } => ArbiterAction::CheckClaim {
            claim: if rule == "threefold" {
                DrawClaim::Threefold
            } else {
                DrawClaim::FiftyMoves
            },
            intended_move: with_move,
        },
        ArbiterCommand::NewGame => ArbiterAction::NewGame,
        ArbiterCommand::Note { ply, text } => ArbiterAction::Annotate { ply, text },
    }
}

/// Runs `touchmove arbiter`.
pub fn run(args: ArbiterArgs) -> ExitCode {
    let who = args
        .who
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "arbiter".to_string());
    let request = ArbiterRequest {
        who,
        board: args.board,
        action: action(args.action),
        key: None,
    };
    match crate::recorder::channel::send(&args.out, &request) {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("touchmove arbiter: {message}");
            ExitCode::FAILURE
        }
    }
}
