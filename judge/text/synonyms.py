"""Words that say the same thing, in one table: the supported controls reword by it (judge/controls/reword.py)
and the alignment pairs its words as one (:func:`judge.text.tokens.synonym_group`, read by ``word_forms``),
so a claim reworded the way a control is, or a paraphrase that swaps a common verb for its synonym ("Bees make
honey." of "Honey bees produce honey."), aligns whole.
"""

from __future__ import annotations

# Word -> replacement. Whole words only; the first letter's case is kept (controls reword by it).
SYNONYMS: dict[str, dict[str, str]] = {
    "en": {
        "approximately": "about", "roughly": "about", "large": "big", "big": "large",
        "begin": "start", "began": "started", "begun": "started",
        "purchase": "buy", "purchased": "bought", "bought": "purchased", "assist": "help", "assisted": "helped",
        "quickly": "rapidly", "rapidly": "quickly", "numerous": "many", "however": "but", "therefore": "so",
        "additionally": "also", "currently": "now", "nearly": "almost", "almost": "nearly", "received": "got",
        "obtained": "got", "commenced": "began", "completed": "finished", "finished": "completed",
    },
    "pt": {
        "aproximadamente": "cerca de", "porém": "contudo", "contudo": "porém", "entretanto": "porém",
        "começou": "iniciou", "iniciou": "começou", "começaram": "iniciaram", "iniciaram": "começaram",
        "adquiriu": "comprou", "comprou": "adquiriu", "rapidamente": "depressa", "atualmente": "hoje",
        "porque": "pois", "ajudar": "auxiliar", "auxiliar": "ajudar", "quase": "praticamente",
        "também": "igualmente", "grande": "amplo", "diversos": "vários", "vários": "diversos",
    },
    "he": {
        "אולם": "אך", "אבל": "אך", "כיום": "היום", "בערך": "בקירוב", "בגלל": "בשל", "בשל": "בגלל",
        "לכן": "על כן", "כמו כן": "בנוסף", "בנוסף": "כמו כן", "מטרה": "יעד", "המטרה": "היעד", "כמעט": "קרוב ל",
        "התחיל": "החל", "החל": "התחיל", "התחילה": "החלה", "החלה": "התחילה", "התחילו": "החלו", "החלו": "התחילו",
        "רבים": "רבים מאוד", "במיוחד": "בעיקר", "בעיקר": "במיוחד",
    },
    "ar": {
        "حوالي": "نحو", "نحو": "حوالي", "لكن": "غير أن", "أيضا": "كذلك", "أيضًا": "كذلك", "كذلك": "أيضا",
        "حاليا": "اليوم", "حاليًا": "اليوم", "بدأ": "شرع", "بدأت": "شرعت", "بسبب": "نتيجة", "تقريبا": "نحو",
        "كبير": "ضخم", "كبيرة": "ضخمة", "خاصة": "لا سيما",
    },
}

# Pairs the alignment also reads as one word (lemmas; never used to reword a control): common verbs and their
# plain synonyms.
ALSO_SAME: tuple[tuple[str, str], ...] = (
    ("make", "produce"), ("build", "construct"), ("show", "display"), ("use", "employ"), ("end", "finish"),
    ("get", "obtain"), ("buy", "purchase"), ("help", "assist"), ("begin", "start"),
)
