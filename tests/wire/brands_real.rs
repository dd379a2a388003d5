//! Real Certabo frames (three reads of a start position, with the readers' noise on empty
//! squares): they decode, and the reader learns the 32 pieces from them without taking
//! the noise for a piece.

use shakmaty::Board;
use touchmove::board::orientation::Orientation;
use touchmove::wire::certabo::{Calibration, Decoder, Frame, TagReader, is_empty};

const FRAMES: &[u8] = include_bytes!("../../fixtures/certabo/start-frames.txt");

fn frames() -> Vec<[[u8; 5]; 64]> {
    let mut out = Vec::new();
    Decoder::new().push(FRAMES, &mut out);
    out.into_iter()
        .map(|f| match f {
            Ok(Frame::Tags(tags)) => *tags,
            other => panic!("a Certabo frame: {other:?}"),
        })
        .collect()
}

#[test]
fn real_frames_calibrate_to_the_start_position_through_the_vote() {
    let frames = frames();
    assert_eq!(frames.len(), 3);
    let noisy = frames[0].iter().filter(|id| !is_empty(id)).count();
    assert!(
        noisy > 32,
        "the first frame has noise on empty squares: {noisy} ids"
    );

    let mut reader = TagReader::new();
    assert_eq!(reader.read(&frames[0]), None, "one frame decides nothing");
    let pieces = reader
        .read(&frames[1])
        .expect("two agreeing frames calibrate");
    assert_eq!(
        reader.calibration().len(),
        32,
        "32 pieces and no noise learnt"
    );
    let start = Board::new();
    for (field, piece) in (0u8..).zip(pieces) {
        let square = Orientation::Normal.field_to_square(field);
        assert_eq!(piece, start.piece_at(square), "{square}");
    }
    assert_eq!(
        reader.read(&frames[2]),
        Some(pieces),
        "the third frame agrees"
    );
}

#[test]
fn one_real_frame_alone_would_take_noise_on_d3_for_a_spare_queen() {
    // Why the reader votes before it calibrates: the first frame reads an id on d3.
    let frames = frames();
    let mut calibration = Calibration::new();
    assert_eq!(calibration.learn_start(&frames[0]), 33);
}
