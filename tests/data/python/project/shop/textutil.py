def slug(text: str) -> str:
    return "-".join(text.lower().split())


def title(text: str) -> str:
    return text.strip().title()


def initials(text: str) -> str:
    words = text.split()
    letters = [w[0].upper() for w in words]
    return "".join(letters)
