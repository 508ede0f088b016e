"""Summary of ab-call.sh's JSON results (session 49): each gpu_to_gpu cell against the default mode
of the same binary and against head.  Usage: python3 ab-summary.py OUT_DIR"""
import json,os,sys
O=sys.argv[1]
def load(f):
    if not os.path.exists(f): return {}
    d=json.load(open(f)); r=d['results']
    return {(x['shape'],x['op'],x['dtype'],x['impl']):x['median_us'] for x in r}
for tag in ['r1','r2','stats']:
    h=load(f'{O}/head-{tag}.json')
    if not h: continue
    v={b:load(f'{O}/{b}-{tag}.json') for b in ['new','b5','p0']}
    print('==',tag)
    for k in sorted(h):
        if 'gpu_to_gpu' not in k[3]: continue
        d=(k[0],k[1],k[2],'reducelab')
        line=f"{k[0]:30s} {k[1]:9s} {k[2]:5s} default {h[d]:8.1f} head {h[k]:8.1f} ({(h[k]/h[d]-1)*100:+6.1f}%)"
        for b,m in v.items():
            if k in m: line+=f" | {b} {m[k]:8.1f} ({(m[k]/m[d]-1)*100:+6.1f}%; {(m[k]/h[k]-1)*100:+5.1f}% vs head)"
        print(line)
