"""Word tables and the two patterns built from them for the relative-time enricher (conventions: timeexpr.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import time

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""Fixed English names: calendar.day_name follows the process locale, and the block text must not."""

DAY_END = time(23, 59, 59)
PART_HOURS: dict[str, tuple[time, time]] = {
    "morning": (time(6), time(11, 59, 59)),
    "noon": (time(12), time(13, 59, 59)),
    "afternoon": (time(12), time(17, 59, 59)),
    "evening": (time(18), DAY_END),
}
"""Inclusive spans of the parts of a day; "night"/"tonight"/晚上 all mean the evening of that day."""

# English. Keys are lower case, words separated by one space (the pattern accepts any run of whitespace).
EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
EN_WEEKDAYS = {name.lower(): index for index, name in enumerate(WEEKDAY_NAMES)}
EN_DIRECTIONS = {"this": 0, "next": 1, "last": -1}
EN_DAY_OFFSETS = {
    "the day before yesterday": -2, "yesterday": -1, "today": 0, "tomorrow": 1, "the day after tomorrow": 2,
}  # fmt: skip
EN_PARTS = {"morning": "morning", "afternoon": "afternoon", "evening": "evening", "night": "evening"}
EN_FIXED_PARTS = {
    "tonight": (0, "evening"), "last night": (-1, "evening"), "this morning": (0, "morning"),
    "this afternoon": (0, "afternoon"), "this evening": (0, "evening"),
}  # fmt: skip
"""Phrases that name a part of a day by themselves: (days from today, part)."""
EN_PERIODS = ("weekend", "week", "month", "year")
EN_UNITS = {
    "min": "minutes", "mins": "minutes", "minute": "minutes", "minutes": "minutes",
    "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
    "day": "days", "days": "days", "week": "weeks", "weeks": "weeks",
    "month": "months", "months": "months", "year": "years", "years": "years",
}  # fmt: skip

# Chinese.
ZH_DAY_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "今天": 0, "明天": 1, "后天": 2, "大后天": 3}
ZH_FIXED_PARTS = {
    "今晚": (0, "evening"), "明晚": (1, "evening"), "昨晚": (-1, "evening"), "今早": (0, "morning"),
    "明早": (1, "morning"),
}  # fmt: skip
ZH_PARTS = {
    "早上": "morning", "早晨": "morning", "上午": "morning", "中午": "noon", "下午": "afternoon",
    "晚上": "evening", "夜里": "evening",
}  # fmt: skip
ZH_DIRECTIONS = {"这": 0, "本": 0, "下": 1, "上": -1}
ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
ZH_YEARS = {"去年": -1, "今年": 0, "明年": 1}
ZH_UNITS = {
    "分钟": "minutes", "小时": "hours", "钟头": "hours", "天": "days", "周": "weeks", "星期": "weeks",
    "礼拜": "weeks", "月": "months", "年": "years",
}  # fmt: skip
"""Keyed without the measure word 个 (三个月 -> 月)."""
ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def zh_number(numeral: str) -> int | None:
    """0-99 written in digits or Chinese numerals (三, 十二, 二十五, 两); None for anything else (一两, 十十)."""
    if numeral.isdigit():
        return int(numeral)
    if "十" not in numeral:
        return ZH_DIGITS.get(numeral) if len(numeral) == 1 else None
    tens_text, _, ones_text = numeral.partition("十")
    tens = ZH_DIGITS.get(tens_text) if tens_text else 1
    ones = ZH_DIGITS.get(ones_text) if ones_text else 0
    if tens is None or ones is None or tens == 0:
        return None
    return tens * 10 + ones


# The two patterns, one per language, built from the tables above. Each top-level alternative is a named group
# that timeexpr.py maps to a handler (match.lastgroup names the outermost group that matched).


def _alternatives(phrases: Iterable[str]) -> str:
    # Longest first: an alternation takes the first branch that matches, and "weekend" must beat "week".
    ordered = sorted(phrases, key=len, reverse=True)
    return "|".join(r"\s+".join(re.escape(word) for word in phrase.split()) for phrase in ordered)


def _starts_with(*phrase_groups: Iterable[str]) -> str:
    # A lookahead on the first character lets the search skip most positions without trying every branch
    # (about 5x faster on ordinary text).
    firsts = sorted({phrase[0] for phrases in phrase_groups for phrase in phrases})
    return rf"(?=[\d{re.escape(''.join(firsts))}])"


# `.`, `/`, `-`, `_`, `@`, `$` glue words into identifiers, paths and flags; a sentence's final period does not.
_EN_START = r"(?<![0-9A-Za-z_@$/\\-])(?<![0-9A-Za-z_]\.)"
_EN_END = r"(?![0-9A-Za-z_@$/\\(-]|\.[0-9A-Za-z_])"
_EN_NUMBER = rf"\d{{1,3}}|{_alternatives(EN_NUMBERS)}"
_EN_FIRST = _starts_with(
    EN_DAY_OFFSETS, EN_WEEKDAYS, EN_DIRECTIONS, EN_FIXED_PARTS, EN_NUMBERS, ("weekend", "the", "end", "in", "half")
)
ENGLISH = re.compile(
    _EN_FIRST
    + _EN_START
    + "(?:"
    + rf"(?P<en_day>(?:(?P<en_rel>{_alternatives(EN_DAY_OFFSETS)})"
    + rf"|(?:(?P<en_dir>this|next|last)\s+)?(?P<en_weekday>{_alternatives(EN_WEEKDAYS)}))"
    + rf"(?:\s+(?P<en_part>{_alternatives(EN_PARTS)}))?)"
    + rf"|(?P<en_fixed>{_alternatives(EN_FIXED_PARTS)})"
    + rf"|(?P<en_period>(?P<en_pdir>this|next|last)\s+(?P<en_punit>{_alternatives(EN_PERIODS)}))"
    + r"|(?P<en_weekend>(?:the\s+)?weekend)"
    + r"|(?P<en_endof>(?:the\s+)?end\s+of\s+(?:the|this)\s+(?P<en_eunit>week|month|year))"
    + rf"|(?P<en_shift>(?P<en_in>in\s+)?(?:(?P<en_num>{_EN_NUMBER})\s+(?P<en_unit>{_alternatives(EN_UNITS)})"
    + r"|(?P<en_half>half\s+an\s+hour))(?(en_in)|\s+ago))"
    + ")"
    + _EN_END,
    re.IGNORECASE | re.ASCII,  # ASCII: case-folding "ſ" to "s" would match words the tables cannot look up
)

_ZH_NUMBER = r"(?<![\d.])\d{1,3}|(?<![第\d])[零一二两三四五六七八九十]{1,3}"
# 一下 ("a bit"), 马上/加上/晚上 end in 下/上 without being "next"/"last".
_ZH_PREFIX = r"这|本|(?<!一)下|(?<![马加以晚早路])上"
_ZH_WEEKDAY = r"[一二三四五六日](?!次)"  # 一周一次 is "once a week", not a Monday
_ZH_PART = _alternatives(ZH_PARTS)
_NOT_A_WEEK = r"(?![期边年围岁长到全])"  # 周期, 周边, 周年, 周围, 周到... are not weeks
_ZH_FIRST = _starts_with(
    ZH_DAY_OFFSETS,
    ZH_FIXED_PARTS,
    ZH_DIRECTIONS,
    ZH_YEARS,
    ZH_DIGITS,
    ("十", "半", "周", "星期", "礼拜"),
    ("月底", "年底"),
)
CHINESE = re.compile(
    _ZH_FIRST
    + "(?:"
    + rf"(?P<zh_shift>(?:(?P<zh_num>{_ZH_NUMBER})(?P<zh_unit>分钟|个?小时|个?钟头|天|周|个?星期|个?礼拜|年|个月)"
    + r"|(?P<zh_half>半)个?(?:小时|钟头))(?P<zh_dir>以后|之后|后|以前|之前|前))"
    + r"|(?P<zh_day>(?P<zh_word>大后天|大前天|(?<![之以然最午过随背先落今])后天|(?<![之以从提目事向往眼面跟])前天"
    + rf"|明天|今天|昨天)(?P<zh_part>{_ZH_PART})?)"
    + rf"|(?P<zh_fixed>{_alternatives(ZH_FIXED_PARTS)})"
    + rf"|(?P<zh_week>(?P<zh_wdir>{_ZH_PREFIX})个?"
    + rf"(?:周(?:(?P<zh_wd1>{_ZH_WEEKDAY})(?P<zh_wp1>{_ZH_PART})?|(?P<zh_we1>末)|{_NOT_A_WEEK})"
    + rf"|(?:星期|礼拜)(?:(?P<zh_wd2>{_ZH_WEEKDAY}|天)(?P<zh_wp2>{_ZH_PART})?|(?P<zh_we2>末))?))"
    + r"|(?P<zh_bare>(?<![每一二两三四五六七八九十几个\d])"
    + rf"(?:周(?:(?P<zh_bd1>{_ZH_WEEKDAY})(?P<zh_bp1>{_ZH_PART})?|(?P<zh_be>末))"
    + rf"|(?:星期|礼拜)(?P<zh_bd2>{_ZH_WEEKDAY}|天)(?P<zh_bp2>{_ZH_PART})?))"
    + rf"|(?P<zh_month>(?P<zh_mdir>{_ZH_PREFIX})个?月(?P<zh_mend>底)?)"
    + r"|(?P<zh_monthend>月底)|(?P<zh_yearend>年底)|(?P<zh_year>今年|明年|去年)"
    + ")"
)
