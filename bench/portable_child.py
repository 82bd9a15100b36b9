from judge.llm import local
try:
    r = local.complete('gemma3-270m', [{'role': 'user', 'content': 'hello world, a longer prompt ' * 10}], {'max_tokens': 8})
    print('CHILD OK', r['choices'][0]['message'])
except Exception as e:
    print('CHILD ERR', type(e).__name__, e)
r = None
try:
    r = local.complete('gemma3-270m', [{'role': 'user', 'content': 'and again, after the crash ' * 10}], {'max_tokens': 8})
    print('CHILD 2 OK', r['choices'][0]['message'])
except Exception as e:
    print('CHILD 2 ERR', type(e).__name__, e)
