//! The clock model: time controls, software clocks and flag fall (FIDE Article 6).
