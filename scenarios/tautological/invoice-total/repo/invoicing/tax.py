# VAT / sales tax rates in basis points by billing country.
RATES_BP = {"DE": 1900, "FR": 2000, "NL": 2100, "GB": 2000, "US": 0}


def tax_rate_bp(country: str) -> int:
    return RATES_BP.get(country.upper(), 0)
