// placeholder: built by its issue
