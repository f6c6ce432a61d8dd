//! The content of one SaleList repetition (seeds/000 Appendix C), with names
//! and values varied from one repetition to the next.
//!
//! The seeds' Perl script varied the strings so that a large message is not
//! made of a handful of repeated strings, which would flatter any parser that
//! caches or interns them. Repetition 0 is the seeds' own SaleList verbatim;
//! later ones are drawn from a seeded generator, so a given seed always gives
//! the same message.

/// One SaleList: always exactly two invoices, as the seeds' schema says.
#[derive(Debug, Clone, PartialEq)]
pub struct SaleList {
    /// The two invoices.
    pub invoices: [Invoice; 2],
}

/// One invoice of a SaleList.
#[derive(Debug, Clone, PartialEq)]
pub struct Invoice {
    /// Two initials, one letter each.
    pub initials: [char; 2],
    /// The customer's surname (at most [`SURNAME_MAX`] bytes, ASCII letters).
    pub surname: String,
    /// Always two items.
    pub items: [Item; 2],
    /// The balance in hundredths (sum of price × quantity).
    pub balance_cents: u32,
    /// The currency name (ASCII letters).
    pub currency: &'static str,
}

/// One item of an invoice.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Three two-digit codes.
    pub codes: [u8; 3],
    /// Free text (ASCII letters and spaces, no markup or delimiter characters).
    pub description: String,
    /// The category name.
    pub category: &'static str,
    /// The price in hundredths.
    pub price_cents: u32,
    /// The quantity (1–99).
    pub quantity: u8,
}

/// The longest surname generated (the fixed-length layout's field width).
pub const SURNAME_MAX: usize = 20;
/// The longest generated description (before any stretching to fit a size).
pub const DESCRIPTION_MAX: usize = 30;

const SYLLABLES: [&str; 24] = [
    "brai", "thwa", "dun", "win", "har", "gre", "ves", "ton", "mar", "ley", "ash", "ford", "kel",
    "bur", "nor", "wick", "sel", "by", "pem", "ber", "ros", "can", "tel", "lo",
];
const ADJECTIVES: [&str; 24] = [
    "Red",
    "Large",
    "Small",
    "Classic",
    "Deluxe",
    "Portable",
    "Wooden",
    "Golden",
    "Silent",
    "Rapid",
    "Ancient",
    "Modern",
    "Blue",
    "Folding",
    "Illustrated",
    "Pocket",
    "Electric",
    "Travel",
    "Junior",
    "Complete",
    "Vintage",
    "Digital",
    "Family",
    "Compact",
];
const NOUNS: [&str; 32] = [
    "Twister",
    "Newspaper",
    "Microscope",
    "Telescope",
    "Atlas",
    "Chess Set",
    "Kite",
    "Lantern",
    "Compass",
    "Dictionary",
    "Puzzle",
    "Radio",
    "Notebook",
    "Umbrella",
    "Teapot",
    "Guitar",
    "Camera",
    "Bicycle Bell",
    "Globe",
    "Calendar",
    "Jigsaw",
    "Novel",
    "Almanac",
    "Sketchbook",
    "Paint Box",
    "Yo Yo",
    "Board Game",
    "Encyclopedia",
    "Magazine",
    "Map",
    "Torch",
    "Clock",
];
const CATEGORIES: [&str; 8] = [
    "Games",
    "Books and Media",
    "Miscellaneous",
    "Toys",
    "Garden",
    "Electronics",
    "Stationery",
    "Music",
];
const CURRENCIES: [&str; 6] = ["Sterling", "Euros", "Dollars", "Yen", "Francs", "Kroner"];

/// Words appended to descriptions when a message must grow to an exact size.
pub const FILLER_WORDS: [&str; 8] = [
    "special", "edition", "with", "extra", "parts", "and", "gift", "wrapping",
];

/// A small, fast, seedable generator (SplitMix64); quality is ample for
/// varying test data and it keeps the output identical across platforms.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The seeds' SaleList exactly as printed in Appendix C.
pub fn seed_sale_list() -> SaleList {
    SaleList {
        invoices: [
            Invoice {
                initials: ['K', 'A'],
                surname: "Braithwaite".to_string(),
                items: [
                    Item {
                        codes: [0, 1, 2],
                        description: "Twister".to_string(),
                        category: "Games",
                        price_cents: 30,
                        quantity: 1,
                    },
                    Item {
                        codes: [2, 3, 1],
                        description: "The Times Newspaper".to_string(),
                        category: "Books and Media",
                        price_cents: 20,
                        quantity: 1,
                    },
                ],
                balance_cents: 50,
                currency: "Sterling",
            },
            Invoice {
                initials: ['T', 'J'],
                surname: "Dunnwin".to_string(),
                items: [
                    Item {
                        codes: [4, 5, 1],
                        description: "The Origin of Species".to_string(),
                        category: "Books and Media",
                        price_cents: 2234,
                        quantity: 2,
                    },
                    Item {
                        codes: [6, 7, 1],
                        description: "Microscope".to_string(),
                        category: "Miscellaneous",
                        price_cents: 3620,
                        quantity: 1,
                    },
                ],
                balance_cents: 8184,
                currency: "Euros",
            },
        ],
    }
}

/// Repetition `index` of the message for a generator state: the seeds' own
/// SaleList first, varied ones after it.
pub fn sale_list(index: usize, rng: &mut Rng) -> SaleList {
    if index == 0 {
        return seed_sale_list();
    }
    SaleList {
        invoices: [invoice(rng), invoice(rng)],
    }
}

fn invoice(rng: &mut Rng) -> Invoice {
    let items = [item(rng), item(rng)];
    let balance_cents = items
        .iter()
        .map(|i| i.price_cents * u32::from(i.quantity))
        .sum();
    Invoice {
        initials: [letter(rng), letter(rng)],
        surname: surname(rng),
        items,
        balance_cents,
        currency: rng.pick(&CURRENCIES),
    }
}

fn item(rng: &mut Rng) -> Item {
    let mut description = format!("{} {}", rng.pick(&ADJECTIVES), rng.pick(&NOUNS));
    // A volume number multiplies the distinct strings well beyond the word lists.
    let volume = rng.below(100);
    let suffix = format!(" No {volume}");
    if description.len() + suffix.len() <= DESCRIPTION_MAX {
        description.push_str(&suffix);
    }
    description.truncate(DESCRIPTION_MAX);
    Item {
        codes: [
            rng.below(100) as u8,
            rng.below(100) as u8,
            rng.below(100) as u8,
        ],
        description,
        category: rng.pick(&CATEGORIES),
        // Under 100.00 each, so that balances fit the fixed layout's widths.
        price_cents: 1 + rng.below(9_998) as u32,
        quantity: 1 + rng.below(9) as u8,
    }
}

fn letter(rng: &mut Rng) -> char {
    char::from(b'A' + rng.below(26) as u8)
}

fn surname(rng: &mut Rng) -> String {
    let parts = 2 + rng.below(2);
    let mut name = String::with_capacity(SURNAME_MAX);
    for _ in 0..parts {
        name.push_str(rng.pick(&SYLLABLES));
    }
    name.truncate(SURNAME_MAX);
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => name,
    }
}

/// Formats hundredths as the seeds print money: at least two integer digits
/// (`00.30`, `22.34`).
pub fn money(cents: u32) -> String {
    format!("{:02}.{:02}", cents / 100, cents % 100)
}

/// Formats hundredths as a JSON number (`0.3` is written `0.30`).
pub fn json_money(cents: u32) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sale_list_starts_with_seed_content_then_varies() {
        let mut rng = Rng::new(7);
        let first = sale_list(0, &mut rng);
        assert_eq!(first.invoices[0].surname, "Braithwaite");
        let second = sale_list(1, &mut rng);
        let third = sale_list(2, &mut rng);
        assert_ne!(second, third);
        assert_ne!(second, first);
    }

    #[test]
    fn sale_list_is_deterministic_for_a_seed() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for i in 0..20 {
            assert_eq!(sale_list(i, &mut a), sale_list(i, &mut b));
        }
    }

    #[test]
    fn generated_fields_fit_the_fixed_layout() {
        let mut rng = Rng::new(3);
        for i in 0..2000 {
            let list = sale_list(i, &mut rng);
            for invoice in &list.invoices {
                assert!(invoice.surname.len() <= SURNAME_MAX);
                assert!(invoice.balance_cents < 1_000_000);
                for item in &invoice.items {
                    assert!(item.description.len() <= DESCRIPTION_MAX);
                    assert!(item.quantity < 100);
                }
            }
        }
    }

    #[test]
    fn money_formats_like_the_seeds() {
        assert_eq!(money(30), "00.30");
        assert_eq!(money(8184), "81.84");
        assert_eq!(json_money(30), "0.30");
    }
}
