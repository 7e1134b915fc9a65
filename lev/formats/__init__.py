"""The product's own date formats (settings.FORMAT_MODULE_PATH): one way to write a date and a moment
everywhere the admin shows one. Django's English locale would write "Dec. 7, 2026, 1:21 a.m." where the
product's pages write "Dec 7, 2026 01:21"; the locale's formats take precedence over settings.DATE_FORMAT,
so they are set here, and templates name them (`|date:"DATETIME_FORMAT"`) rather than spell them."""
