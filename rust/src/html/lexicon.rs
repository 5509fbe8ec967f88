//! Phrases in a block's *text* that mark it as page furniture, whatever its markup: pointers to other pages
//! ("read also", "mehr zum Thema", "lea también"), the site's own services (subscriptions, cookies,
//! copyright, sharing, comments, donations, a marketing box's "download the white paper") and what an author
//! bio says ("is a reporter", "schreibt über"). Counted per unit for the block model, which weighs them with
//! everything else: an article may well say "subscribe" once, a subscription prompt says little else.
//!
//! Each list carries the English phrase and the same in German, French, Spanish, Italian, Polish,
//! Portuguese and Dutch (and a few Russian and Chinese ones). Matching is ASCII-case-blind and a phrase must
//! start a word.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

/// Pointers to other content.
const PROMPTS: &[&str] = &[
    "read more",
    "read also",
    "also read",
    "see also",
    "more on this",
    "more about",
    "you may also like",
    "you might also",
    "recommended",
    "further reading",
    "continue reading",
    "click here",
    "learn more",
    "related:",
    "lesen sie auch",
    "lesen sie mehr",
    "mehr zum thema",
    "weiterlesen",
    "weitere artikel",
    "das könnte",
    "auch interessant",
    "siehe auch",
    "mehr dazu",
    "mehr erfahren",
    "hier klicken",
    "zum artikel",
    "zum beitrag",
    "lire aussi",
    "à lire aussi",
    "lire la suite",
    "voir aussi",
    "sur le même sujet",
    "en savoir plus",
    "lea también",
    "lea más",
    "leer más",
    "ver también",
    "te puede interesar",
    "más información",
    "leggi anche",
    "leggi di più",
    "vedi anche",
    "czytaj też",
    "czytaj także",
    "czytaj więcej",
    "zobacz też",
    "zobacz także",
    "leia também",
    "leia mais",
    "veja também",
    "lees ook",
    "lees meer",
    "meer over",
    "читайте также",
    "смотрите также",
    "阅读更多",
    "相关阅读",
];

/// The site's own services: accounts, subscriptions, ads, rights, sharing, comments, support.
const SERVICES: &[&str] = &[
    "subscribe",
    "subscription",
    "newsletter",
    "sign up",
    "log in",
    "login",
    "register",
    "cookie",
    "privacy",
    "copyright",
    "rights reserved",
    "terms of use",
    "advertis",
    "sponsored",
    "donate",
    "support us",
    "share this",
    "follow us",
    "comment",
    "reply",
    "javascript",
    "abonn",
    "anmelden",
    "registrier",
    "datenschutz",
    "impressum",
    "alle rechte",
    "werbung",
    "anzeige",
    "spende",
    "unterstütz",
    "teilen",
    "folgen sie",
    "kommentar",
    "antworten",
    "s'abonner",
    "abonnez",
    "inscri",
    "connexion",
    "tous droits",
    "publicité",
    "partager",
    "commentaire",
    "suscrib",
    "iniciar sesión",
    "derechos reservados",
    "publicidad",
    "compartir",
    "comentario",
    "apóyanos",
    "iscriviti",
    "accedi",
    "tutti i diritti",
    "pubblicità",
    "condividi",
    "commento",
    "subskryb",
    "zaloguj",
    "prywatno",
    "wszelkie prawa",
    "reklam",
    "udostępnij",
    "komentarz",
    "assine",
    "inscreva",
    "todos os direitos",
    "publicidade",
    "compartilhe",
    "comentário",
    "inloggen",
    "alle rechten",
    "reactie",
    "подпис",
    "реклам",
    "版权",
    "广告",
    // calls to action of marketing boxes
    "download",
    "white paper",
    "whitepaper",
    "free trial",
    "webinar",
    "e-book",
    "ebook",
    "request a demo",
    "get started",
    "herunterladen",
    "kostenlos testen",
    "télécharger",
    "essai gratuit",
    "descargar",
    "prueba gratis",
    "scarica",
    "prova gratuita",
    "pobierz",
    "baixar",
    "downloaden",
];

/// What an author's bio says of its author.
const BIOS: &[&str] = &[
    "is a reporter",
    "is a journalist",
    "is a writer",
    "is an author",
    "is a freelance",
    "is a contributor",
    "is a correspondent",
    "is an editor",
    "is the author",
    "writes about",
    "has written for",
    "ist redakteur",
    "ist journalist",
    "ist autor",
    "arbeitet als",
    "schreibt für",
    "schreibt über",
    "est journaliste",
    "est rédact",
    "est auteur",
    "es periodista",
    "es redactor",
    "es autor",
    "è giornalista",
    "è autore",
    "jest dziennikar",
    "jest autor",
    "é jornalista",
    "is journalist",
    "is redacteur",
];

/// Hits in one text: prompts, services, bio phrases, and whether a prompt opens it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Hits {
    pub prompts: u16,
    pub services: u16,
    pub bios: u16,
    pub prompt_first: bool,
}

fn automaton() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA)) // every unit's text goes through it
            .build(PROMPTS.iter().chain(SERVICES).chain(BIOS))
            .expect("a few hundred literal phrases build")
    })
}

/// Add the phrases found in `text` to `hits` (`at_start`: `text` opens its unit).
pub fn count(text: &[u8], at_start: bool, hits: &mut Hits) {
    for m in automaton().find_iter(text) {
        let start = m.start();
        if start > 0 && (text[start - 1].is_ascii_alphanumeric() || text[start - 1] >= 0x80) {
            continue;
        }
        let p = m.pattern().as_usize();
        if p < PROMPTS.len() {
            hits.prompts = hits.prompts.saturating_add(1);
            if at_start
                && text[..start]
                    .iter()
                    .all(|b| !b.is_ascii_alphanumeric() && *b < 0x80)
            {
                hits.prompt_first = true;
            }
        } else if p < PROMPTS.len() + SERVICES.len() {
            hits.services = hits.services.saturating_add(1);
        } else {
            hits.bios = hits.bios.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_in_text() {
        let mut h = Hits::default();
        count("Lea también: el gobierno anuncia".as_bytes(), true, &mut h);
        assert_eq!(
            h,
            Hits {
                prompts: 1,
                prompt_first: true,
                ..Hits::default()
            }
        );
        let mut h = Hits::default();
        count(b"Subscribe to our Newsletter and read more", false, &mut h);
        assert_eq!(
            h,
            Hits {
                prompts: 1,
                services: 2,
                ..Hits::default()
            }
        );
        let mut h = Hits::default();
        count(
            b"Jane Miller is a reporter who writes about towns",
            false,
            &mut h,
        );
        assert_eq!(h.bios, 2);
        let mut h = Hits::default();
        count(b"The recommitment of the board", true, &mut h);
        assert_eq!(h, Hits::default());
    }
}
