"""Words that say the same thing: the forms of an irregular English verb (:data:`IRREGULAR_VERBS`: "wrote" and
"written" are forms of "write", which a stemmer cannot see), and synonyms in one table: the supported controls
reword by it (judge/controls/reword.py) and the alignment pairs its words as one
(:func:`judge.text.tokens.synonym_group`, read by ``word_forms``), so a claim reworded the way a control is, or
a paraphrase that swaps a common verb for its synonym ("Bees make honey." of "Honey bees produce honey."),
aligns whole.
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
    ("get", "obtain"),  # buy/purchase, help/assist, begin/start: SYNONYMS holds them already
)


# An irregular English verb, its past and its participle, in threes ("write wrote written"): word_forms joins them
# at the lemma, and the past forms are the finite verbs judge.text.proposition recognises.
_IRREGULAR = """
    arise arose arisen awake awoke awoken bear bore borne beat beat beaten become became become
    begin began begun bend bent bent bet bet bet bite bit bitten bleed bled bled blow blew blown
    break broke broken breed bred bred bring brought brought build built built burn burnt burnt
    burst burst burst buy bought bought cast cast cast catch caught caught choose chose chosen
    cling clung clung come came come cost cost cost creep crept crept cut cut cut deal dealt dealt dig dug dug
    dive dove dived draw drew drawn dream dreamt dreamt drink drank drunk drive drove driven eat ate eaten
    fall fell fallen feed fed fed feel felt felt fight fought fought find found found flee fled fled
    fly flew flown forbid forbade forbidden forget forgot forgotten forgive forgave forgiven freeze froze frozen
    get got gotten give gave given go went gone grind ground ground grow grew grown hang hung hung
    hear heard heard hide hid hidden hit hit hit hold held held hurt hurt hurt keep kept kept
    kneel knelt knelt know knew known lay laid laid lead led led leap leapt leapt learn learnt learnt
    leave left left lend lent lent let let let lie lay lain light lit lit lose lost lost make made made
    mean meant meant meet met met mistake mistook mistaken pay paid paid prove proved proven quit quit quit
    run ran run ring rang rung rise rose risen say said said see saw seen seek sought sought sell sold sold
    send sent sent set set set sew sewed sewn shake shook shaken shine shone shone shoot shot shot
    show showed shown shrink shrank shrunk shut shut shut sing sang sung sink sank sunk sit sat sat
    sleep slept slept slide slid slid speak spoke spoken speed sped sped spend spent spent spin spun spun
    spit spat spat split split split spread spread spread spring sprang sprung stand stood stood
    steal stole stolen stick stuck stuck sting stung stung stink stank stunk stride strode stridden
    strike struck struck swear swore sworn sweep swept swept swim swam swum swing swung swung take took taken
    teach taught taught tear tore torn tell told told think thought thought throw threw thrown
    thrust thrust thrust understand understood understood undertake undertook undertaken upset upset upset
    wake woke woken wear wore worn weave wove woven weep wept wept win won won wind wound wound
    withdraw withdrew withdrawn write wrote written overcome overcame overcome overtake overtook overtaken
    oversee oversaw overseen undergo underwent undergone outrun outran outrun outsell outsold outsold
"""
_WORDS = _IRREGULAR.split()
IRREGULAR_VERBS: dict[str, tuple[str, str]] = {_WORDS[i]: (_WORDS[i + 1], _WORDS[i + 2]) for i in range(0, len(_WORDS), 3)}
