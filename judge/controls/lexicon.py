"""The small per-language tables the control rules use: meaning-keeping synonyms, clause lead-ins that may
move to the end of a sentence, negation flips, month names and the "about X" phrasing of an unrelated claim.

Kept deliberately small and conservative: a supported control must stay supported, so a synonym is listed
only where the two words mean the same in nearly every context, and a negation rule only where inserting or
removing it reverses the statement. Languages are the codes ``judge.text.detect_language`` returns.
"""

from __future__ import annotations

import re

from judge.text.language import CASE_INSENSITIVE
from judge.text.synonyms import SYNONYMS  # noqa: F401 (the controls reword by it)

# Word -> replacement (judge/text/synonyms.py: the one table, which the alignment reads too).

# A sentence that opens with one of these, up to its first comma, may move that clause to its end (and back).
LEAD_INS: dict[str, tuple[str, ...]] = {
    "en": (
        "according to", "in", "on", "at", "after", "before", "since", "during", "by", "following", "despite",
        "although", "when", "because", "while", "as of", "last year", "this year", "in addition to",
    ),
    "pt": (
        "segundo", "de acordo com", "conforme", "em", "no", "na", "nos", "nas", "após", "depois de", "antes de",
        "desde", "durante", "apesar de", "embora", "quando", "porque",
    ),
    "he": ("לפי", "על פי", "לדברי", "בשנת", "בשנה", "בעקבות", "אחרי", "לאחר", "לפני", "מאז", "במהלך", "כאשר", "למרות"),
    "es": ("según", "en", "después de", "antes de", "desde", "durante", "cuando", "aunque"),
    "ar": ("وفقا ل", "وفقًا ل", "حسب", "بحسب", "في", "بعد", "قبل", "منذ", "خلال", "عندما", "رغم"),
}

# Negation flips: (pattern, replacement) tried in order; the first that matches is applied once. "remove"
# rules turn a negative statement positive, "insert" rules the reverse. Idioms where the negation does not
# reverse the statement ("not only", "לא רק", "não só", "لا سيما") are excluded by the patterns.
_HE = r"(?<![\u05d0-\u05ea])"  # no Hebrew letter before (a word start)
_HE_END = r"(?![\u05d0-\u05ea])"
NEGATION: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "en": {
        "remove": (
            (r"\b(is|are|was|were|has|have|had|does|do|did|can|could|will|would|should|must|may|might) not (?!only\b|just\b|least\b|until\b|merely\b)", r"\1 "),
            (r"\b(is|are|was|were|has|have|had|does|do|did|could|would|should)n't\b(?! only\b| just\b)", r"\1"),
            (r"\bcannot\b", "can"),
            (r"\bwon't\b", "will"),
        ),
        "insert": (
            (r"\b(is|are|was|were|can|could|will|would|should|must)\b(?! not\b)(?=\s+\w)", r"\1 not"),
            (r"\b(has|have|had) (been|\w+ed)\b", r"\1 not \2"),
        ),
    },
    "pt": {
        "remove": ((r"(?<!\w)não (?!só\b|apenas\b|somente\b|mais\b|obstante\b)", ""), (r"(?<!\w)nunca ", "")),
        "insert": (
            (
                (
                    r"(?<=\w )(é|são|foi|foram|era|eram|está|estão|estava|estavam|será|serão|tem|têm|tinha|tinham|teve|"
                    r"tiveram|pode|podem|podia|deve|devem|há|houve|possui|possuem|existe|existem)(?!\w)"
                ),
                r"não \1",
            ),
        ),
    },
    "he": {
        "remove": (
            (_HE + r"לא (?!רק" + _HE_END + r"|פחות" + _HE_END + r"|יותר" + _HE_END + r"|מעט" + _HE_END + r"|פעם" + _HE_END + r"|כל" + _HE_END + r")", ""),
            (_HE + r"(ו?)אין" + _HE_END, r"\1יש"),
            (_HE + r"(אינו|אינה|אינם|אינן) ", ""),
        ),
        "insert": (
            (_HE + r"(ו?)יש" + _HE_END, r"\1אין"),
            (
                _HE + r"(היה|הייתה|היתה|היו|יהיה|תהיה|יהיו|ניתן|צריך|צריכה|צריכים|יכול|יכולה|יכולים|נמצא|נמצאת|"
                r"נמצאים|קיים|קיימת|קיימים|הצליח|הצליחה|הצליחו|עלה|עלתה|עלו|ירד|ירדה|ירדו|גדל|גדלה|גדלו|הוסיף|"
                r"הוסיפה|הוסיפו|הוספנו|התחיל|התחילה|התחילו|החליט|החליטה|החליטו|אישר|אישרה|אישרו|פורסם|פורסמה|"
                r"פורסמו|נבנה|נבנתה|נבנו|הגיע|הגיעה|הגיעו|מחייב|מחייבת|מספיק|מספיקה|עובד|עובדת|עובדים)" + _HE_END,
                r"לא \1",
            ),
            (_HE + r"אפשר" + _HE_END, "אי אפשר"),
        ),
    },
    "ar": {
        "remove": (
            (r"(?<!\w)لم يكن(?!\w)", "كان"),
            (r"(?<!\w)لم تكن(?!\w)", "كانت"),
            (r"(?<!\w)لم يتم(?!\w)", "تم"),
            (r"(?<!\w)ليس هناك(?!\w)", "هناك"),
            (r"(?<!\w)لا (?=[يت]\w{2,})(?!سيما)", ""),
        ),
        "insert": (
            (r"(?<!\w)كان(?!\w)", "لم يكن"),
            (r"(?<!\w)كانت(?!\w)", "لم تكن"),
            (r"(?<!\w)تم(?!\w)", "لم يتم"),
            (r"(?<!\w)هناك(?!\w)", "ليس هناك"),
            (r"(?<!\w)(يوجد|توجد|يمكن|يجب|يعتبر|تعتبر|يستطيع|تستطيع)(?!\w)", r"لا \1"),
        ),
    },
}
NEGATION["es"] = {"remove": ((r"(?<!\w)no (?!solo\b|sólo\b)", ""),), "insert": ()}

# Meaning-keeping rewrites of number forms: (pattern, replacement), all applied.
REWRITES: dict[str, tuple[tuple[str, str], ...]] = {
    "en": ((r"(\d)\s?%", r"\1 percent"), (r"\b([Aa])bout (?=\d)", r"\1pproximately ")),
    "pt": ((r"(\d)\s?%", r"\1 por cento"),),
    "es": ((r"(\d)\s?%", r"\1 por ciento"),),
    "he": (
        (r"(\d)\s?%", r"\1 אחוזים"),
        (r"(?<![\u05d0-\u05ea])כ[\u05be-](?=\d)", "בערך "),
        (r"(?<![\u05d0-\u05ea])ב[\u05be-]?(?=(?:1[5-9]|20)\d\d(?!\d))", "בשנת "),
    ),
    "ar": ((r"(\d)\s?%", r"\1 بالمئة"),),
}

# Titles that look like names or acronyms but are not swapped as entities (normalised forms).
NOT_NAMES = frozenset(['ד"ר', 'ח"כ', 'מנכ"ל', 'מנכ"לית', 'יו"ר', 'סמנכ"ל', 'סמנכ"לית', 'עו"ד', 'רו"ח', "פרופ'", 'Dr', 'Mr', 'Mrs', 'Ms', 'Prof', 'Sr', 'Sra', 'St'])
# Words that never make a record's subject (question words and prepositions the stopword list lacks).
NOT_SUBJECTS = frozenset(
    ["מול", "אצל", "לגבי", "בין", "תחת", "ליד", "אחרי", "לפני", "כמה", "מה", "מי", "איך", "למה", "מדוע", "מתי", "איפה", "היכן", "האם", "איזה", "איזו", "אילו", "מהו", "מהי", "Which", "What", "Who", "How", "When", "Where", "Why", "quais", "qual", "quem", "como", "quando", "onde", "porque", "quanto", "quantos"]
)

# Month names by language (index 0 = January). Hebrew months may carry a one-letter prefix (ב, ל, מ, ו, ה).
MONTHS: dict[str, tuple[str, ...]] = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"),
    "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"),
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"),
    "he": ("ינואר", "פברואר", "מרץ", "אפריל", "מאי", "יוני", "יולי", "אוגוסט", "ספטמבר", "אוקטובר", "נובמבר", "דצמבר"),
    "ar": ("يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر"),
}
MONTH_PREFIX = {"he": "[ובלמה]?", "ar": "(?:في |و)?"}


def month_pattern(language: str) -> re.Pattern | None:
    names = MONTHS.get(language)
    if not names:
        return None
    prefix = MONTH_PREFIX.get(language, "")
    flags = re.IGNORECASE if language in CASE_INSENSITIVE else 0
    return re.compile(rf"(?<!\w){prefix}({'|'.join(names)})(?!\w)", flags)


# Unsupported controls: a detail the source does not state, added to a claim aligned to it: who says so.
# "{claim}" is the claim without its closing mark; "{year}" a year no source of the record writes.
DETAILS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {"year": ("{claim}, according to a {year} report", "{claim}, as a {year} survey found")},
    "pt": {"year": ("{claim}, segundo um relatório de {year}",)},
    "es": {"year": ("{claim}, según un informe de {year}",)},
    "he": {"year": ("{claim}, לפי דוח משנת {year}", "{claim}, כך לפי סקר משנת {year}")},
    "ar": {"year": ("{claim}، وفقا لتقرير صدر عام {year}",)},
}
