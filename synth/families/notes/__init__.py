"""Families of the notes service (`knowledge_work`): answering from the knowledge base,
keeping the project tracker current, writing meeting notes, and an article that changes."""
