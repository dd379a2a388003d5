//! `--boards` of `touchmove demo`: a number of DGT boards (`4`) or a mix of kinds
//! (`dgt:4,millennium:2,chessnut:2,certabo:2`), numbered in the order given.

use std::fmt;
use std::str::FromStr;

use crate::board::kind::BoardKind;

/// The most boards a demo runs.
const MOST: u32 = 10;

/// How many boards of which kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardMix(Vec<(BoardKind, u32)>);

impl BoardMix {
    /// The number of boards.
    pub fn count(&self) -> u32 {
        self.0.iter().map(|(_, n)| n).sum()
    }

    /// The kind of board `index` (0-based).
    pub fn kind_of(&self, index: u32) -> BoardKind {
        let mut left = index;
        for &(kind, n) in &self.0 {
            if left < n {
                return kind;
            }
            left -= n;
        }
        BoardKind::Dgt
    }
}

impl FromStr for BoardMix {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mix = match text.trim().parse::<u32>() {
            Ok(n) => BoardMix(vec![(BoardKind::Dgt, n)]),
            Err(_) => BoardMix(
                text.split(',')
                    .map(|part| {
                        let (kind, n) = part.split_once(':').ok_or_else(|| {
                            format!("`{part}`: give KIND:COUNT, e.g. millennium:2")
                        })?;
                        let n = n
                            .trim()
                            .parse()
                            .map_err(|_| format!("`{part}`: the count is not a number"))?;
                        match kind.parse()? {
                            BoardKind::Pegasus => Err(format!(
                                "`{part}`: the demo runs no Pegasus (it needs DGT's developer \
                                 key); `touchmove sim --kind pegasus` runs a virtual one to \
                                 record with `touchmove record`"
                            )),
                            kind => Ok((kind, n)),
                        }
                    })
                    .collect::<Result<_, String>>()?,
            ),
        };
        if !(1..=MOST).contains(&mix.count()) {
            return Err(format!("{text}: a demo runs 1 to {MOST} boards"));
        }
        Ok(mix)
    }
}

impl fmt::Display for BoardMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, n)| format!("{n} {k}")).collect();
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_numbers_its_boards_in_order() {
        let mix: BoardMix = "dgt:4,millennium:2,chessnut:2,certabo:2".parse().unwrap();
        assert_eq!(mix.count(), 10);
        assert_eq!(mix.kind_of(3), BoardKind::Dgt);
        assert_eq!(mix.kind_of(4), BoardKind::Millennium);
        assert_eq!(mix.kind_of(9), BoardKind::Certabo);
        assert_eq!("4".parse::<BoardMix>().unwrap().kind_of(3), BoardKind::Dgt);
        let pegasus = "dgt:2,pegasus:1".parse::<BoardMix>().unwrap_err();
        assert!(pegasus.contains("sim --kind pegasus"), "{pegasus}");
        assert!("dgt:11".parse::<BoardMix>().is_err());
        assert!("abacus:2".parse::<BoardMix>().is_err());
    }
}
