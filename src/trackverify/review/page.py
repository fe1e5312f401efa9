"""The review page: one HTML document, inline CSS and JS, no external asset. The JS draws
each view as inline SVG from /api/items and posts each decision to /api/decision.

Keys are handled one after the other: a decision moves to the next item only once the
server has answered that it is written. A refused or failed post (the server stopped,
another token, review.csv edited) shows the reason in the red ``#status`` line, keeps the
item and drops the keys pressed after it; pressing the key again retries (the server
restarted on the same folder takes the same address and token)."""

PAGE = r"""<!doctype html><html><head><meta charset="utf-8"><title>trackverify review</title>
<style>body{font:14px sans-serif;margin:1em}svg{border:1px solid #bbb;margin:4px}
.d{font-weight:bold}.note{color:#555}text{font-size:9px}
#status{color:#fff;background:#b00;padding:4px}#status:empty{display:none}</style></head><body>
<div id="progress">loading</div><p id="status" role="alert"></p><div id="head"></div>
<div><b>anchor frame</b><div id="anchor"></div></div>
<div><b>observed frame</b><div id="observed"></div></div><p class="note" id="note"></p>
<p>keys: c correct, w wrong, u unsure (decide and advance); b / Backspace back; arrows move</p>
<script>
const token=new URLSearchParams(location.search).get("token");let items=[],at=0;
const R=25,S=6,W=2*R*S;
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c])}
function view(c,a,b,layers){let s=`<svg width="${W}" height="${W}"><text x="3" y="10">${a}-${b} (um, ${2*R} um wide)</text>`;
 for(const [pts,col,r,lab] of layers){for(const p of pts){if(p[b]===undefined)continue;
  const x=W/2+(p[a]-c[a])*S,y=W/2-(p[b]-c[b])*S;s+=`<circle cx="${x}" cy="${y}" r="${r}" fill="none" stroke="${col}"/>`;
  if(lab&&p.label!==null)s+=`<text x="${x+4}" y="${y-3}" fill="${col}">${esc(p.label)}</text>`}}return s+"</svg>"}
function views(c,layers,dims){let s=view(c,"x","y",layers);return s+(dims.includes("z")?view(c,"x","z",layers):" (2D: no x-z view)")}
function draw(){const it=items[at];if(!it)return;const n=items.filter(i=>i.decision).length;
 document.getElementById("progress").textContent=`${n} of ${items.length} decided`;
 document.getElementById("head").innerHTML=`item ${at+1} of ${items.length}: recording ${esc(it.recording)}, frame ${it.frame}, claimed id ${esc(it.pred_id)}; decision: <span class="d" id="decision">${esc(it.decision||"none")}</span>`;
 const A=it.anchor?[{...it.anchor,label:it.pred_id}]:[];
 document.getElementById("anchor").innerHTML=it.anchor?views(it.anchor,[[it.anchor_neighbours,"#888",3,1],[A,"#c00",6,1]],it.dims):"no anchor place";
 const O=[{...it.observation,label:"obs"}],T=it.track.map(p=>({...p,label:"t"+p.label}));
 const E=it.expected?[{...it.expected,label:it.pred_id}]:A;
 document.getElementById("observed").innerHTML=views(it.observation,[[it.observed,"#888",3,1],[T,"#07c",2,1],[E,"#c00",6,it.expected?1:0],[O,"#000",8,1]],it.dims);
 document.getElementById("note").textContent=`frame ${it.anchor_frame} is the anchor frame; near points: ${it.observed_source}; red: ${it.note}; blue: the id's track, frames t-5..t+5`}
function say(t){document.getElementById("status").textContent=t}
async function why(r){if(r.status===403)return "the server refused this page's token: open the address the terminal printed";
 let t="";try{t=(await r.json()).error}catch(e){}return `the server answered ${r.status}${t?": "+t:""}`}
async function call(url,opt){let r;try{r=await fetch(url,{...opt,headers:{"X-Token":token,"Content-Type":"application/json"}})}
 catch(e){throw "the server does not answer: start trackverify review on this folder again, then press the key again"}
 if(!r.ok)throw await why(r);return r.json()}
async function decide(d){const it=items[at];
 try{const j=await call("/api/decision",{method:"POST",body:JSON.stringify({index:it.index,decision:d})});
  j.decisions.forEach((x,i)=>{if(items[i])items[i].decision=x});say("");return true}
 catch(e){say(`not saved: item ${at+1} is still ${it.decision||"undecided"} (${e})`);return false}}
let queue=Promise.resolve(),epoch=0;
async function key(k){const m={c:"correct",w:"wrong",u:"unsure"};
 if(m[k]){if(!await decide(m[k])){epoch++;draw();return}if(at<items.length-1)at++}
 else if(k==="b"||k==="Backspace"||k==="ArrowLeft"||k==="ArrowUp")at=Math.max(0,at-1);
 else if(k==="ArrowRight"||k==="ArrowDown")at=Math.min(items.length-1,at+1);
 draw()}
document.addEventListener("keydown",e=>{const k=e.key;if(!"cwub".includes(k)&&!k.startsWith("Arrow")&&k!=="Backspace")return;
 if(k.length>1)e.preventDefault();const n=epoch;queue=queue.then(()=>n===epoch&&items.length?key(k):null).catch(x=>say(String(x)))});
call("/api/items",{}).then(j=>{items=j.items;at=Math.min(j.start,items.length-1);draw()}).catch(e=>say(`cannot load the items: ${e}`));
</script></body></html>"""
