"""Play between accounts: the lobby (seeks), an account's turns across its games (turns),
tournaments and their standings, matches and their statistics (``matches``, ``match_stats``),
challenges, ratings, the house bots the server plays itself, the accounts and their event
stream, and the sweeper that ends the games nobody will finish. Each concern with its
application code and, where it has one, its servicer (``service``: Lobby and Tournament;
``match_service``: Match; ``challenge_service``:
Challenge and Account; ``rating_service``: Rating).
"""
